/**
 * Resource lock — what an election needs from the object it is held on: read the record, create
 * it, update it, and say who we are.
 * Mirrors client-go tools/leaderelection/resourcelock/interface.go (LeaderElectionRecord,
 * ResourceLockConfig, Interface, New).
 *
 * @upstream kubernetes/client-go tools/leaderelection/resourcelock/interface.go (LeaderElectionRecord, ResourceLockConfig, Interface, New, LeasesResourceLock)
 * @chapter 06-leader-election
 *
 * Solves:
 * - the elector decides who leads; the lock only moves a record in and out of an object. Keeping
 *   the two apart lets the elector be tested against any lock, and let upstream move from
 *   Endpoints and ConfigMap annotations to Leases without touching the election;
 * - `get` hands back the record *and* its bytes: the elector compares bytes to see that the
 *   record changed, which is all it trusts (never the times written in it).
 *
 * Invariants:
 * - `update` writes over the object the last `get`, `create` or `update` returned — with its
 *   resourceVersion — so an update based on a stale read fails with 409 Conflict;
 * - every method rejects with the server's StatusError (code/client/errors.ts) when the server
 *   refused.
 *
 * What upstream does differently: `LeaderElectionRecord` also carries `strategy` and
 * `preferredHolder` for coordinated leader election (alpha in 1.32, off by default); we leave
 * them out. The Endpoints and ConfigMap locks are gone upstream too; `New` only says so.
 */
import type { KubeObject } from "../../api/meta.ts";

// #region record
/**
 * LeaderElectionRecord — who holds the lock, for how long, since when. Times are milliseconds
 * since the epoch; `acquireTime`/`renewTime` are for people reading the object, not for the
 * election (see leader-elector.ts: expiry is judged by when *we* saw the record change).
 */
export interface LeaderElectionRecord {
  /** Empty: nobody holds it (a leader that stepped down clears it); anyone may take it. */
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: number;
  renewTime: number;
  /** How many times the holder changed (Lease `leaseTransitions`). */
  leaderTransitions: number;
}
// #endregion record

/** An event recorder as the controllers' (code/controllers/pod-control.ts): Eventf on one object. */
export type EventRecorder = (
  object: KubeObject,
  type: "Normal" | "Warning",
  reason: string,
  message: string,
) => void;

/** ResourceLockConfig: what every lock shares. */
export interface ResourceLockConfig {
  /** Unique among the candidates of one election (kube-scheduler: `<hostname>_<uuid>`). */
  identity: string;
  /** Optional: "<identity> became leader" / "stopped leading" events on the lock's object. */
  eventRecorder?: EventRecorder;
}

/** What `get` returns: the record, and the bytes the elector compares to see a change. */
export interface ObservedLock {
  record: LeaderElectionRecord;
  raw: string;
}

// #region interface
/** resourcelock.Interface. `signal` cancels the request (a renew past its deadline). */
export interface Interface {
  get(signal?: AbortSignal): Promise<ObservedLock>;
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  recordEvent(message: string): void;
  identity(): string;
  /** `namespace/name`, for logs and messages. */
  describe(): string;
}
// #endregion interface

/** The name a learner may prefer for `Interface`. */
export type ResourceLock = Interface;

/** `--leader-elect-resource-lock` values; only `leases` is left in 1.32. */
export const LeasesResourceLock = "leases";
const removedLocks: Record<string, string> = {
  endpoints: "endpoints lock is removed, migrate to leases",
  configmaps: "configmaps lock is removed, migrate to leases",
  endpointsleases: "endpointsleases lock is removed, migrate to leases",
  configmapsleases: "configmapsleases lock is removed, migrated to leases",
};

/** Why a lock type cannot be made (resourcelock.New's errors, upstream's texts). */
export class ResourceLockError extends Error {
  override name = "ResourceLockError";
}

/** resourcelock.New's check of the lock type: undefined for `leases`, else upstream's error. */
export function checkLockType(lockType: string): ResourceLockError | undefined {
  if (lockType === LeasesResourceLock) return undefined;
  const removed = removedLocks[lockType];
  return new ResourceLockError(removed ?? `Invalid lock-type ${lockType}`);
}
