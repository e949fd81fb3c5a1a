/**
 * ReplicaSetControllerRefManager — which ReplicaSets a Deployment owns right now: its own that
 * still match its selector, orphans that match (adopted), and its own that no longer match
 * (released). The ReplicaSet twin of PodControllerRefManager (../controller-ref-manager.ts).
 * Mirrors kubernetes/kubernetes pkg/controller/controller_ref_manager.go (ReplicaSetControllerRefManager,
 * NewReplicaSetControllerRefManager, ClaimReplicaSets, AdoptReplicaSet, ReleaseReplicaSet) and
 * controller_utils.go (RSControlInterface, RealRSControl.PatchReplicaSet).
 *
 * Solves:
 * - `kubectl delete deployment web --cascade=orphan` leaves its ReplicaSets; a new Deployment
 *   with the same selector must take them over (and so keep their pods) rather than make new
 *   ones; a ReplicaSet relabelled out of the selector must be let go;
 * - a Deployment being deleted must not adopt (the garbage collector would delete what it just
 *   took): the first adoption re-reads the Deployment from the server.
 *
 * Invariants:
 * - claimReplicaSets returns exactly the ReplicaSets the Deployment controls afterwards;
 * - a ReplicaSet with another controller is never touched;
 * - NotFound (gone) is no error; on release neither is Invalid (recreated under the same name).
 *
 * @upstream kubernetes/kubernetes pkg/controller/controller_ref_manager.go (ReplicaSetControllerRefManager, NewReplicaSetControllerRefManager, ClaimReplicaSets, AdoptReplicaSet, ReleaseReplicaSet)
 * @upstream kubernetes/kubernetes pkg/controller/controller_utils.go (RSControlInterface, RealRSControl)
 * @chapter 04-informers
 */

import type { ReplicaSet } from "../../api/apps.ts";
import { type Selector, selectorMatches } from "../../api/labels.ts";
import type { KubeObject } from "../../api/meta.ts";
import { isInvalid, isNotFound } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../../client/rest/request.ts";
import {
  AdoptionError,
  type CanAdoptFunc,
  deleteOwnerRefStrategicMergePatch,
  ownerRefControllerPatch,
} from "../controller-ref-manager.ts";
import { type GroupVersionKind, getControllerOf } from "../pod-control.ts";

/** How the manager patches ReplicaSets (RSControlInterface); tests may swap it. */
export interface RSControlInterface {
  patchReplicaSet(namespace: string, name: string, data: object): Promise<void>;
}

export function realRSControl(client: Clientset): RSControlInterface {
  return {
    async patchReplicaSet(namespace, name, data) {
      await client.appsV1.replicaSets(namespace).patch(name, StrategicMergePatchType, data);
    },
  };
}

// #region claim-replica-sets
export class ReplicaSetControllerRefManager {
  private canAdoptResult?: Promise<void>;

  constructor(
    private readonly rsControl: RSControlInterface,
    readonly controller: KubeObject,
    readonly selector: Selector,
    readonly controllerKind: GroupVersionKind,
    private readonly canAdoptFunc?: CanAdoptFunc,
  ) {}

  private canAdopt(): Promise<void> {
    this.canAdoptResult ??= this.canAdoptFunc?.() ?? Promise.resolve();
    return this.canAdoptResult;
  }

  /** The ReplicaSets this Deployment owns after adopting and releasing (ClaimReplicaSets). */
  async claimReplicaSets(sets: readonly ReplicaSet[]): Promise<ReplicaSet[]> {
    const owner = this.controller.metadata;
    const claimed: ReplicaSet[] = [];
    const errors: unknown[] = [];
    for (const rs of sets) {
      const matches = selectorMatches(this.selector, rs.metadata.labels ?? {});
      const ref = getControllerOf(rs);
      try {
        if (ref) {
          if (ref.uid !== owner.uid) continue;
          if (matches) {
            claimed.push(rs);
            continue;
          }
          // Ours, no longer matching: let go — unless we are being deleted.
          if (!owner.deletionTimestamp) await this.releaseReplicaSet(rs);
          continue;
        }
        // An orphan: adopt it if it matches and neither side is going away.
        if (owner.deletionTimestamp || !matches || rs.metadata.deletionTimestamp) continue;
        if (owner.namespace && owner.namespace !== rs.metadata.namespace) continue;
        await this.adoptReplicaSet(rs);
        claimed.push(rs);
      } catch (err) {
        if (!isNotFound(err)) errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1)
      throw new AggregateError(errors, errors.map((e) => (e as Error).message).join(", "));
    return claimed;
  }

  async adoptReplicaSet(rs: ReplicaSet): Promise<void> {
    const { namespace = "", name = "", uid = "" } = rs.metadata;
    try {
      await this.canAdopt();
    } catch (err) {
      throw new AdoptionError(
        `can't adopt ReplicaSet ${namespace}/${name} (${uid}): ${(err as Error).message}`,
      );
    }
    await this.rsControl.patchReplicaSet(
      namespace,
      name,
      ownerRefControllerPatch(this.controller, this.controllerKind, uid),
    );
  }

  async releaseReplicaSet(rs: ReplicaSet): Promise<void> {
    const { namespace = "", name = "", uid = "" } = rs.metadata;
    try {
      await this.rsControl.patchReplicaSet(
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
// #endregion claim-replica-sets
