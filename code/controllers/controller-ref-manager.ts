/**
 * Controller ref managers — decide, object by object, which pods (or ReplicaSets) a controller
 * owns right now: it keeps its own that still match, adopts orphans that match, and releases its
 * own that no longer match. BaseControllerRefManager holds the rule; PodControllerRefManager and
 * the Deployment's ReplicaSetControllerRefManager only say how to patch their kind.
 * Mirrors kubernetes/kubernetes pkg/controller/controller_ref_manager.go (BaseControllerRefManager,
 * ClaimObject, CanAdopt, PodControllerRefManager, ClaimPods, AdoptPod, ReleasePod,
 * RecheckDeletionTimestamp, ownerRefControllerPatch, GenerateDeleteOwnerRefStrategicMergeBytes).
 *
 * Solves:
 * - ownership is the controllerRef, not the selector: a pod owned by another controller is never
 *   touched, even if it matches; but the selector decides membership, so a matching orphan
 *   (a pod whose ReplicaSet was deleted with `--cascade=orphan`) is adopted and a pod relabelled
 *   out of the selector is released (a way to take a pod out of service for debugging);
 * - a controller that is being deleted must not adopt: the garbage collector would then delete
 *   the pod it just adopted. The cache may not know of the deletion yet, so before the first
 *   adoption the manager re-reads the owner from the server (canAdopt, once per sync);
 * - two controllers racing to adopt one pod: the patch carries the pod's UID and the API server
 *   refuses a second controller reference, so at most one wins.
 *
 * Invariants:
 * - claimPods (claimObjects) returns exactly the objects that, after this call, are controlled by
 *   the owner;
 * - an error on one object does not stop the others; all errors come back together;
 * - a NotFound (the object is gone) is not an error; neither is an Invalid on release (it was
 *   recreated with a new UID, or already has no such owner).
 *
 * @upstream kubernetes/kubernetes pkg/controller/controller_ref_manager.go (BaseControllerRefManager, ClaimObject, CanAdopt, PodControllerRefManager, NewPodControllerRefManager, ClaimPods, AdoptPod, ReleasePod, RecheckDeletionTimestamp, ownerRefControllerPatch, GenerateDeleteOwnerRefStrategicMergeBytes)
 * @chapter 04-informers
 */

import type { Pod } from "../api/core.ts";
import { type Selector, selectorMatches } from "../api/labels.ts";
import type { KubeObject } from "../api/meta.ts";
import type { GroupVersionKind } from "../api/schema.ts";
import { isInvalid, isNotFound } from "../client/errors.ts";
import { getControllerOf, newControllerRef, type PodControlInterface } from "./pod-control.ts";

/** Resolves if the owner may adopt; rejects with why not. */
export type CanAdoptFunc = () => Promise<void>;

export class AdoptionError extends Error {
  override name = "AdoptionError";
}

// #region recheck-deletion
/** A canAdopt that re-reads the owner (uncached) and refuses if it is being deleted (RecheckDeletionTimestamp). */
export function recheckDeletionTimestamp(getObject: () => Promise<KubeObject>): CanAdoptFunc {
  return async () => {
    let obj: KubeObject;
    try {
      obj = await getObject();
    } catch (err) {
      throw new AdoptionError(`can't recheck DeletionTimestamp: ${(err as Error).message}`);
    }
    if (obj.metadata.deletionTimestamp)
      throw new AdoptionError(
        `${obj.metadata.namespace}/${obj.metadata.name} has just been deleted at ${obj.metadata.deletionTimestamp}`,
      );
  };
}
// #endregion recheck-deletion

// #region patches
/** Adds the controllerRef; `uid` makes the patch fail on a pod recreated under the same name. */
export function ownerRefControllerPatch(owner: KubeObject, gvk: GroupVersionKind, podUID: string): object {
  return { metadata: { ownerReferences: [newControllerRef(owner, gvk)], uid: podUID } };
}

/** Removes the owner's reference by uid (`$patch: delete` in a list merged by uid). */
export function deleteOwnerRefStrategicMergePatch(podUID: string, ownerUIDs: string[]): object {
  return {
    metadata: {
      ownerReferences: ownerUIDs.map((uid) => ({ $patch: "delete", uid })),
      uid: podUID,
    },
  };
}
// #endregion patches

// #region claim-object
/**
 * BaseControllerRefManager: the rule shared by every kind a controller owns — keep what is ours
 * and matches, release what is ours and no longer matches, adopt matching orphans. The kinds
 * differ only in how they patch (a pod, a ReplicaSet) and what the error calls the object.
 */
export class BaseControllerRefManager {
  private canAdoptResult?: Promise<void>;

  constructor(
    readonly controller: KubeObject,
    readonly selector: Selector,
    readonly controllerKind: GroupVersionKind,
    private readonly canAdoptFunc?: CanAdoptFunc,
  ) {}

  /** Asked once per manager, however many objects it adopts (canAdoptOnce). */
  canAdopt(): Promise<void> {
    this.canAdoptResult ??= this.canAdoptFunc?.() ?? Promise.resolve();
    return this.canAdoptResult;
  }

  /** Every object claimed or not; errors on some do not stop the others and come back together. */
  protected async claimObjects<T extends KubeObject>(
    objects: readonly T[],
    match: (obj: T) => boolean,
    adopt: (obj: T) => Promise<void>,
    release: (obj: T) => Promise<void>,
  ): Promise<T[]> {
    const claimed: T[] = [];
    const errors: unknown[] = [];
    for (const obj of objects) {
      try {
        if (await this.claimObject(obj, match, adopt, release)) claimed.push(obj);
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1)
      throw new AggregateError(errors, errors.map((e) => (e as Error).message).join(", "));
    return claimed;
  }

  /** One object: true if the controller owns it afterwards (ClaimObject). */
  private async claimObject<T extends KubeObject>(
    obj: T,
    match: (obj: T) => boolean,
    adopt: (obj: T) => Promise<void>,
    release: (obj: T) => Promise<void>,
  ): Promise<boolean> {
    const ref = getControllerOf(obj);
    const owner = this.controller.metadata;
    if (ref) {
      // Someone else's: never ours, whatever its labels.
      if (ref.uid !== owner.uid) return false;
      if (match(obj)) return true;
      // Ours but no longer matching: release it — unless we are being deleted (the GC handles it).
      if (owner.deletionTimestamp) return false;
      await release(obj);
      return false;
    }
    // An orphan: adopt it if it matches and neither side is going away.
    if (owner.deletionTimestamp || !match(obj)) return false;
    if (obj.metadata.deletionTimestamp) return false;
    if (owner.namespace && owner.namespace !== obj.metadata.namespace) return false;
    try {
      await adopt(obj);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    return true;
  }

  /** Adopt: ask canAdopt, then patch in our controllerRef; a racing owner's patch is refused. */
  protected async adoptWith(kind: string, obj: KubeObject, patch: PatchFunc): Promise<void> {
    const { namespace = "", name = "", uid = "" } = obj.metadata;
    try {
      await this.canAdopt();
    } catch (err) {
      throw new AdoptionError(`can't adopt ${kind} ${namespace}/${name} (${uid}): ${(err as Error).message}`);
    }
    // The API server refuses a second `controller: true` reference, so a racing owner loses.
    await patch(namespace, name, ownerRefControllerPatch(this.controller, this.controllerKind, uid));
  }

  /** Release: patch our reference out; gone or recreated (the uid no longer matches) is no error. */
  protected async releaseWith(obj: KubeObject, patch: PatchFunc): Promise<void> {
    const { namespace = "", name = "", uid = "" } = obj.metadata;
    try {
      await patch(
        namespace,
        name,
        deleteOwnerRefStrategicMergePatch(uid, [this.controller.metadata.uid ?? ""]),
      );
    } catch (err) {
      if (isNotFound(err) || isInvalid(err)) return;
      throw err;
    }
  }
}

/** How a manager writes one object of its kind (a strategic merge patch). */
export type PatchFunc = (namespace: string, name: string, data: object) => Promise<void>;
// #endregion claim-object

// #region claim-pods
export class PodControllerRefManager extends BaseControllerRefManager {
  constructor(
    private readonly podControl: PodControlInterface,
    controller: KubeObject,
    selector: Selector,
    controllerKind: GroupVersionKind,
    canAdoptFunc?: CanAdoptFunc,
  ) {
    super(controller, selector, controllerKind, canAdoptFunc);
  }

  /** The pods this controller owns after adopting and releasing (ClaimPods). */
  claimPods(pods: readonly Pod[], ...filters: ((pod: Pod) => boolean)[]): Promise<Pod[]> {
    const match = (pod: Pod) =>
      selectorMatches(this.selector, pod.metadata.labels ?? {}) && filters.every((f) => f(pod));
    return this.claimObjects(
      pods,
      match,
      (p) => this.adoptPod(p),
      (p) => this.releasePod(p),
    );
  }

  adoptPod(pod: Pod): Promise<void> {
    return this.adoptWith("Pod", pod, (ns, name, data) => this.podControl.patchPod(ns, name, data));
  }

  releasePod(pod: Pod): Promise<void> {
    return this.releaseWith(pod, (ns, name, data) => this.podControl.patchPod(ns, name, data));
  }
}
// #endregion claim-pods
