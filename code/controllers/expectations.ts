/**
 * ControllerExpectations — what a controller has asked the API server to do and has not yet seen
 * come back through its informer: "I created 3 pods for ReplicaSet web; wake me properly once the
 * watch has shown me all 3".
 * Mirrors kubernetes/kubernetes pkg/controller/controller_utils.go (ControllerExpectations,
 * ControlleeExpectations, UIDTrackingControllerExpectations, ExpectationsTimeout).
 *
 * Solves:
 * - a controller decides from its cache, and its cache lags the server. Right after creating 3
 *   pods, the cache still shows 0; a sync that ran then would create 3 more. So a sync first asks
 *   `satisfiedExpectations(key)`: while creations or deletions are outstanding, it does not act;
 * - a watch event can be lost for good (a dropped delete the relist never reports, a pod created
 *   and deleted before anyone saw it): after 5 minutes an expectation expires and the controller
 *   acts again, so it never sleeps forever;
 * - a graceful deletion shows up twice (an update setting deletionTimestamp, then the delete):
 *   UIDTrackingControllerExpectations remembers *which* pods it is waiting for, so each deletion
 *   is counted once.
 *
 * Invariants:
 * - once set, an expectation only goes down (creationObserved / deletionObserved) until it is
 *   set again by the next manageReplicas;
 * - `satisfiedExpectations` is true when there is no record, when both counts are <= 0, or when
 *   the record is older than ExpectationsTimeoutMs;
 * - a podKey is counted as deleted at most once per expectDeletions.
 *
 * @upstream kubernetes/kubernetes pkg/controller/controller_utils.go (ExpectationsTimeout, ControllerExpectations, ControlleeExpectations, SatisfiedExpectations, SetExpectations, ExpectCreations, ExpectDeletions, CreationObserved, DeletionObserved, LowerExpectations, RaiseExpectations, DeleteExpectations, UIDTrackingControllerExpectations)
 * @chapter 04-informers
 */

import { type Clock, realClock } from "../client/util/clock.ts";

/** How long an unmet expectation keeps a controller from acting (ExpectationsTimeout, 5 minutes). */
export const ExpectationsTimeoutMs = 5 * 60 * 1000;

/** One controller's outstanding creations and deletions (ControlleeExpectations). */
export interface ControlleeExpectations {
  readonly key: string;
  add: number;
  del: number;
  /** When it was set, on the expectations' clock. */
  readonly timestamp: number;
}

// #region expectations
export class ControllerExpectations {
  private readonly store = new Map<string, ControlleeExpectations>();

  constructor(private readonly clock: Clock = realClock) {}

  getExpectations(controllerKey: string): ControlleeExpectations | undefined {
    return this.store.get(controllerKey);
  }

  /**
   * May the controller act on `controllerKey` now? Yes if it never set expectations, if they are
   * met, or if they expired (a lost watch event must not stall the controller forever).
   */
  satisfiedExpectations(controllerKey: string): boolean {
    const exp = this.store.get(controllerKey);
    if (!exp) return true;
    if (exp.add <= 0 && exp.del <= 0) return true;
    return this.clock.now() - exp.timestamp > ExpectationsTimeoutMs;
  }

  /** Replaces whatever was expected before (SetExpectations): each manageReplicas starts afresh. */
  setExpectations(controllerKey: string, add: number, del: number): void {
    this.store.set(controllerKey, { key: controllerKey, add, del, timestamp: this.clock.now() });
  }

  expectCreations(controllerKey: string, adds: number): void {
    this.setExpectations(controllerKey, adds, 0);
  }

  expectDeletions(controllerKey: string, dels: number): void {
    this.setExpectations(controllerKey, 0, dels);
  }

  lowerExpectations(controllerKey: string, add: number, del: number): void {
    const exp = this.store.get(controllerKey);
    if (!exp) return;
    exp.add -= add;
    exp.del -= del;
  }

  raiseExpectations(controllerKey: string, add: number, del: number): void {
    this.lowerExpectations(controllerKey, -add, -del);
  }

  /** The informer showed one pod this controller created (or a create that never happened). */
  creationObserved(controllerKey: string): void {
    this.lowerExpectations(controllerKey, 1, 0);
  }

  deletionObserved(controllerKey: string): void {
    this.lowerExpectations(controllerKey, 0, 1);
  }

  /** Forgets the controller (its object was deleted; a new one of that name starts clean). */
  deleteExpectations(controllerKey: string): void {
    this.store.delete(controllerKey);
  }
}
// #endregion expectations

// #region uid-tracking
/**
 * Expectations that remember which pods (by `namespace/name`) a controller deletes, so that
 * an update setting deletionTimestamp and the final delete of the same pod count once.
 */
export class UIDTrackingControllerExpectations {
  private readonly uids = new Map<string, Set<string>>();

  constructor(readonly expectations: ControllerExpectations = new ControllerExpectations()) {}

  /** The pod keys still expected to be deleted. */
  getUIDs(controllerKey: string): ReadonlySet<string> | undefined {
    return this.uids.get(controllerKey);
  }

  expectDeletions(controllerKey: string, deletedKeys: string[]): void {
    const set = new Set(deletedKeys);
    this.uids.set(controllerKey, set);
    this.expectations.expectDeletions(controllerKey, set.size);
  }

  /** Counts `deleteKey` only if it was expected and not counted yet. */
  deletionObserved(controllerKey: string, deleteKey: string): void {
    const set = this.uids.get(controllerKey);
    if (!set?.has(deleteKey)) return;
    this.expectations.deletionObserved(controllerKey);
    set.delete(deleteKey);
  }

  deleteExpectations(controllerKey: string): void {
    this.expectations.deleteExpectations(controllerKey);
    this.uids.delete(controllerKey);
  }

  // The rest is the plain expectations' (Go embeds ControllerExpectationsInterface).
  satisfiedExpectations(controllerKey: string): boolean {
    return this.expectations.satisfiedExpectations(controllerKey);
  }
  expectCreations(controllerKey: string, adds: number): void {
    this.expectations.expectCreations(controllerKey, adds);
  }
  creationObserved(controllerKey: string): void {
    this.expectations.creationObserved(controllerKey);
  }
  getExpectations(controllerKey: string): ControlleeExpectations | undefined {
    return this.expectations.getExpectations(controllerKey);
  }
}
// #endregion uid-tracking
