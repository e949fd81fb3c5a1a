/**
 * ReplicaSet status — what the controller reports back: how many pods it counts, how many carry
 * the template's labels, are ready, are available; which generation of the spec it has seen;
 * and a ReplicaFailure condition when it could not create or delete.
 * Mirrors kubernetes/kubernetes pkg/controller/replicaset/replica_set_utils.go (calculateStatus,
 * updateReplicaSetStatus, NewReplicaSetCondition, GetCondition, SetCondition, RemoveCondition,
 * filterOutCondition).
 *
 * Solves:
 * - `kubectl get rs` and `kubectl rollout status` read these numbers; the Deployment controller
 *   decides its rollout from availableReplicas — so ready is not enough: a pod counts as
 *   available only once it has been ready for minReadySeconds;
 * - `status.observedGeneration == metadata.generation` is how a client knows the status
 *   describes the spec it wrote (kubectl scale; then wait);
 * - a controller that cannot create pods (quota, admission) must say so where the user looks:
 *   the ReplicaFailure condition carries the error until a sync succeeds again;
 * - writing an unchanged status would wake every watcher of ReplicaSets for nothing, once per
 *   sync: updateReplicaSetStatus writes only when something changed.
 *
 * Invariants:
 * - calculateStatus does not change `rs`; replicas = the number of pods given (the active, owned
 *   ones); observedGeneration is set by updateReplicaSetStatus, to the generation acted on;
 * - the status is written through the `status` subresource, so it can never change the spec;
 * - one retry: on a failed write, GET the latest and write once more (statusUpdateRetries = 1).
 *
 * @upstream kubernetes/kubernetes pkg/controller/replicaset/replica_set_utils.go (updateReplicaSetStatus, calculateStatus, NewReplicaSetCondition, GetCondition, SetCondition, RemoveCondition)
 * @chapter 04-informers
 */

import type { ReplicaSet, ReplicaSetCondition, ReplicaSetStatus } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import { selectorFromSet, selectorMatches } from "../../api/labels.ts";
import type { ResourceClient } from "../../client/kubernetes/resource.ts";
import { isPodAvailable, isPodReady } from "../active-pods.ts";

export const ReplicaSetReplicaFailure = "ReplicaFailure";
/** Tries after the first failed status write (statusUpdateRetries). */
export const statusUpdateRetries = 1;

// #region calculate-status
/** The status `rs` should have given its active, owned pods and how manageReplicas went. */
export function calculateStatus(
  rs: ReplicaSet,
  filteredPods: readonly Pod[],
  manageReplicasErr: unknown,
  nowMs: number,
): ReplicaSetStatus {
  const newStatus: ReplicaSetStatus = structuredClone(rs.status ?? { replicas: 0 });
  // The template's labels are a superset of the selector: a pod may match one and not the other.
  const templateLabels = selectorFromSet(rs.spec.template.metadata?.labels ?? {});
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const pod of filteredPods) {
    if (selectorMatches(templateLabels, pod.metadata.labels ?? {})) fullyLabeled++;
    if (isPodReady(pod)) {
      ready++;
      if (isPodAvailable(pod, rs.spec.minReadySeconds ?? 0, nowMs)) available++;
    }
  }
  const failureCond = getCondition(rs.status, ReplicaSetReplicaFailure);
  if (manageReplicasErr && !failureCond) {
    const diff = filteredPods.length - (rs.spec.replicas ?? 1);
    const reason = diff < 0 ? "FailedCreate" : diff > 0 ? "FailedDelete" : "";
    const message =
      manageReplicasErr instanceof Error ? manageReplicasErr.message : String(manageReplicasErr);
    setCondition(newStatus, newReplicaSetCondition(ReplicaSetReplicaFailure, "True", reason, message, nowMs));
  } else if (!manageReplicasErr && failureCond) {
    removeCondition(newStatus, ReplicaSetReplicaFailure);
  }
  newStatus.replicas = filteredPods.length;
  newStatus.fullyLabeledReplicas = fullyLabeled;
  newStatus.readyReplicas = ready;
  newStatus.availableReplicas = available;
  return newStatus;
}
// #endregion calculate-status

// #region conditions
export function newReplicaSetCondition(
  type: string,
  status: ReplicaSetCondition["status"],
  reason: string,
  message: string,
  nowMs: number,
): ReplicaSetCondition {
  // metav1.Time marshals whole seconds.
  const lastTransitionTime = new Date(Math.floor(nowMs / 1000) * 1000).toISOString().replace(".000Z", "Z");
  return { type, status, lastTransitionTime, reason, message };
}

export function getCondition(
  status: ReplicaSetStatus | undefined,
  type: string,
): ReplicaSetCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/** Adds or replaces the condition — unless one of that type with the same status and reason is there. */
export function setCondition(status: ReplicaSetStatus, condition: ReplicaSetCondition): void {
  const current = getCondition(status, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  status.conditions = [...filterOutCondition(status.conditions, condition.type), condition];
}

export function removeCondition(status: ReplicaSetStatus, type: string): void {
  const rest = filterOutCondition(status.conditions, type);
  if (rest.length > 0) status.conditions = rest;
  else delete status.conditions;
}

function filterOutCondition(
  conditions: ReplicaSetCondition[] | undefined,
  type: string,
): ReplicaSetCondition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}
// #endregion conditions

// #region update-status
const sameConditions = (a: ReplicaSetCondition[] | undefined, b: ReplicaSetCondition[] | undefined) =>
  JSON.stringify(a ?? []) === JSON.stringify(b ?? []);

/** True when writing `newStatus` would change nothing (the steady state). */
export function statusUnchanged(rs: ReplicaSet, newStatus: ReplicaSetStatus): boolean {
  const s = rs.status ?? { replicas: 0 };
  return (
    (s.replicas ?? 0) === newStatus.replicas &&
    (s.fullyLabeledReplicas ?? 0) === (newStatus.fullyLabeledReplicas ?? 0) &&
    (s.readyReplicas ?? 0) === (newStatus.readyReplicas ?? 0) &&
    (s.availableReplicas ?? 0) === (newStatus.availableReplicas ?? 0) &&
    (rs.metadata.generation ?? 0) === (s.observedGeneration ?? 0) &&
    sameConditions(s.conditions, newStatus.conditions)
  );
}

/**
 * Writes `newStatus` through the status subresource, stamped with the generation acted on; does
 * nothing when it would change nothing. Resolves with the ReplicaSet as the server has it.
 */
export async function updateReplicaSetStatus(
  client: ResourceClient<ReplicaSet>,
  rs: ReplicaSet,
  newStatus: ReplicaSetStatus,
): Promise<ReplicaSet> {
  if (statusUnchanged(rs, newStatus)) return rs;
  // The generation we acted on — not the server's latest, which we may not have seen.
  const status = { ...newStatus, observedGeneration: rs.metadata.generation };
  let current = rs;
  for (let i = 0; ; i++) {
    try {
      return await client.updateStatus({ ...current, status });
    } catch (err) {
      if (i >= statusUpdateRetries) throw err;
    }
    // A conflict, most likely: take the latest resourceVersion and try once more.
    current = await client.get(rs.metadata.name ?? "");
  }
}
// #endregion update-status
