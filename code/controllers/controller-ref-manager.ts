/**
 * PodControllerRefManager — decides, pod by pod, which pods a controller owns right now: it keeps
 * its own pods that still match, adopts orphans that match, and releases its pods that no
 * longer match.
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
 * - claimPods returns exactly the pods that, after this call, are controlled by the owner;
 * - an error on one pod does not stop the others; all errors come back together;
 * - a NotFound (the pod is gone) is not an error; neither is an Invalid on release (the pod was
 *   recreated with a new UID, or already has no such owner).
 *
 * @upstream kubernetes/kubernetes pkg/controller/controller_ref_manager.go (BaseControllerRefManager, ClaimObject, CanAdopt, PodControllerRefManager, NewPodControllerRefManager, ClaimPods, AdoptPod, ReleasePod, RecheckDeletionTimestamp, ownerRefControllerPatch, GenerateDeleteOwnerRefStrategicMergeBytes)
 * @chapter 04-informers
 */

import type { Pod } from "../api/core.ts";
import { type Selector, selectorMatches } from "../api/labels.ts";
import type { KubeObject } from "../api/meta.ts";
import { isInvalid, isNotFound } from "../client/errors.ts";
import {
  type GroupVersionKind,
  getControllerOf,
  newControllerRef,
  type PodControlInterface,
} from "./pod-control.ts";

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

// #region claim-pods
export class PodControllerRefManager {
  private canAdoptResult?: Promise<void>;

  constructor(
    private readonly podControl: PodControlInterface,
    readonly controller: KubeObject,
    readonly selector: Selector,
    readonly controllerKind: GroupVersionKind,
    private readonly canAdoptFunc?: CanAdoptFunc,
  ) {}

  /** Asked once per manager, however many pods it adopts (canAdoptOnce). */
  canAdopt(): Promise<void> {
    this.canAdoptResult ??= this.canAdoptFunc?.() ?? Promise.resolve();
    return this.canAdoptResult;
  }

  /** The pods this controller owns after adopting and releasing (ClaimPods). */
  async claimPods(pods: readonly Pod[], ...filters: ((pod: Pod) => boolean)[]): Promise<Pod[]> {
    const match = (pod: Pod) =>
      selectorMatches(this.selector, pod.metadata.labels ?? {}) && filters.every((f) => f(pod));
    const claimed: Pod[] = [];
    const errors: unknown[] = [];
    for (const pod of pods) {
      try {
        if (await this.claimObject(pod, match)) claimed.push(pod);
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1)
      throw new AggregateError(errors, errors.map((e) => (e as Error).message).join(", "));
    return claimed;
  }

  /** One pod: true if the controller owns it afterwards (ClaimObject). */
  private async claimObject(pod: Pod, match: (pod: Pod) => boolean): Promise<boolean> {
    const ref = getControllerOf(pod);
    const owner = this.controller.metadata;
    if (ref) {
      // Someone else's pod: never ours, whatever its labels.
      if (ref.uid !== owner.uid) return false;
      if (match(pod)) return true;
      // Ours but no longer matching: release it — unless we are being deleted (the GC handles it).
      if (owner.deletionTimestamp) return false;
      try {
        await this.releasePod(pod);
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
      return false;
    }
    // An orphan.
    if (owner.deletionTimestamp || !match(pod)) return false;
    if (pod.metadata.deletionTimestamp) return false;
    if (owner.namespace && owner.namespace !== pod.metadata.namespace) return false;
    try {
      await this.adoptPod(pod);
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    return true;
  }

  async adoptPod(pod: Pod): Promise<void> {
    const { namespace = "", name = "", uid = "" } = pod.metadata;
    try {
      await this.canAdopt();
    } catch (err) {
      throw new AdoptionError(`can't adopt Pod ${namespace}/${name} (${uid}): ${(err as Error).message}`);
    }
    // The API server refuses a second `controller: true` reference, so a racing owner loses.
    await this.podControl.patchPod(
      namespace,
      name,
      ownerRefControllerPatch(this.controller, this.controllerKind, uid),
    );
  }

  async releasePod(pod: Pod): Promise<void> {
    const { namespace = "", name = "", uid = "" } = pod.metadata;
    try {
      await this.podControl.patchPod(
        namespace,
        name,
        deleteOwnerRefStrategicMergePatch(uid, [this.controller.metadata.uid ?? ""]),
      );
    } catch (err) {
      // Gone, or recreated with another UID (the uid in the patch is then invalid): nothing to release.
      if (isNotFound(err) || isInvalid(err)) return;
      throw err;
    }
  }
}
// #endregion claim-pods
