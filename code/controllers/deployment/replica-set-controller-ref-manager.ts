/**
 * ReplicaSetControllerRefManager — which ReplicaSets a Deployment owns right now: its own that
 * still match its selector, orphans that match (adopted), and its own that no longer match
 * (released). The rule is BaseControllerRefManager's (../controller-ref-manager.ts); this file
 * only says how a ReplicaSet is patched.
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
import type { GroupVersionKind } from "../../api/schema.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../../client/rest/request.ts";
import { BaseControllerRefManager, type CanAdoptFunc } from "../controller-ref-manager.ts";

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
export class ReplicaSetControllerRefManager extends BaseControllerRefManager {
  constructor(
    private readonly rsControl: RSControlInterface,
    controller: KubeObject,
    selector: Selector,
    controllerKind: GroupVersionKind,
    canAdoptFunc?: CanAdoptFunc,
  ) {
    super(controller, selector, controllerKind, canAdoptFunc);
  }

  /** The ReplicaSets this Deployment owns after adopting and releasing (ClaimReplicaSets). */
  claimReplicaSets(sets: readonly ReplicaSet[]): Promise<ReplicaSet[]> {
    return this.claimObjects(
      sets,
      (rs) => selectorMatches(this.selector, rs.metadata.labels ?? {}),
      (rs) => this.adoptReplicaSet(rs),
      (rs) => this.releaseReplicaSet(rs),
    );
  }

  adoptReplicaSet(rs: ReplicaSet): Promise<void> {
    return this.adoptWith("ReplicaSet", rs, (ns, name, data) =>
      this.rsControl.patchReplicaSet(ns, name, data),
    );
  }

  releaseReplicaSet(rs: ReplicaSet): Promise<void> {
    return this.releaseWith(rs, (ns, name, data) => this.rsControl.patchReplicaSet(ns, name, data));
  }
}
// #endregion claim-replica-sets
