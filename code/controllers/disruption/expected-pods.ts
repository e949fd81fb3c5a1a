/**
 * What a budget counts — the arithmetic of the disruption controller: how many pods the budget
 * expects, how many must stay healthy, how many are healthy, and so how many may go.
 * Upstream: pkg/controller/disruption/disruption.go (getExpectedPodCount, getExpectedScale, the
 * finders, countHealthyPods, buildDisruptedPodMap) and pkg/apis/policy/helper (the condition).
 *
 * Solves:
 * - "at most 25% unavailable" needs a denominator that does not shrink as pods die: it is the
 *   sum of the owning controllers' `spec.replicas` (a Deployment's, found through its
 *   ReplicaSet), never the number of pods that happen to exist;
 * - "at least 2 available" needs no denominator: the matching pods are counted;
 * - a pod just evicted is still listed until its deletion lands: `disruptedPods` keeps it out of
 *   the healthy count for up to two minutes, so two evictions in a row cannot both spend the
 *   last allowed disruption.
 *
 * Invariants:
 * - disruptionsAllowed = max(0, currentHealthy − desiredHealthy), and 0 whenever expectedPods is 0;
 * - percentages round up (ceil): 50% of 3 is 2, for minAvailable and maxUnavailable alike;
 * - a pod without a controller makes a percentage (or maxUnavailable) budget report it as
 *   unmanaged; a controller of a kind we do not serve is an error ("found no controllers for pod").
 *
 * @upstream kubernetes/kubernetes pkg/controller/disruption/disruption.go (getExpectedPodCount, getExpectedScale, getPodReplicaSet, getPodDeployment, countHealthyPods, buildDisruptedPodMap, DeletionTimeout)
 * @upstream kubernetes/kubernetes pkg/apis/policy/helper/helpers.go (UpdateDisruptionAllowedCondition, ConditionsAreUpToDate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/meta/conditions.go (SetStatusCondition)
 * @chapter 05-scheduler
 */
import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import type { IntOrString, Pod } from "../../api/core.ts";
import type { OwnerReference } from "../../api/meta.ts";
import {
  DisruptionAllowedCondition,
  InsufficientPodsReason,
  type MetaCondition,
  type PodDisruptionBudget,
  SufficientPodsReason,
} from "../../api/policy.ts";
import { isPodReady } from "../active-pods.ts";
import { getScaledValueFromIntOrPercent } from "../deployment/util/deployment-util.ts";
import { getControllerOf } from "../pod-control.ts";

/** How long an evicted pod may linger before the budget counts it again (DeletionTimeout). */
export const DeletionTimeoutMs = 2 * 60_000;

/** What the finders read: the owners' listers, by namespace and name. */
export interface ControllerListers {
  replicaSet(namespace: string, name: string): ReplicaSet | undefined;
  deployment(namespace: string, name: string): Deployment | undefined;
}

interface ControllerAndScale {
  uid: string;
  scale: number;
}

/** verifyGroupKind: the reference names `kind` in one of `groups`. */
function isGroupKind(ref: OwnerReference, kind: string, groups: string[]): boolean {
  const group = ref.apiVersion.includes("/") ? ref.apiVersion.split("/")[0] : "";
  return ref.kind === kind && groups.includes(group);
}

// #region finders
/** A ReplicaSet not itself run by a Deployment: its own replicas. */
function podReplicaSet(
  l: ControllerListers,
  ref: OwnerReference,
  ns: string,
): ControllerAndScale | undefined {
  if (!isGroupKind(ref, "ReplicaSet", ["apps", "extensions"])) return undefined;
  const rs = l.replicaSet(ns, ref.name);
  if (!rs || rs.metadata.uid !== ref.uid) return undefined;
  // A Deployment's ReplicaSet: the Deployment's finder answers (its replicas, not the RS's).
  if (getControllerOf(rs)?.kind === "Deployment") return undefined;
  return { uid: rs.metadata.uid ?? "", scale: rs.spec.replicas ?? 1 };
}

/** A pod of a Deployment's ReplicaSet: the Deployment's replicas (the RS's change mid-rollout). */
function podDeployment(
  l: ControllerListers,
  ref: OwnerReference,
  ns: string,
): ControllerAndScale | undefined {
  if (!isGroupKind(ref, "ReplicaSet", ["apps", "extensions"])) return undefined;
  const rs = l.replicaSet(ns, ref.name);
  if (!rs || rs.metadata.uid !== ref.uid) return undefined;
  const owner = getControllerOf(rs);
  if (!owner || !isGroupKind(owner, "Deployment", ["apps", "extensions"])) return undefined;
  const d = l.deployment(ns, owner.name);
  if (!d || d.metadata.uid !== owner.uid) return undefined;
  return { uid: d.metadata.uid ?? "", scale: d.spec.replicas ?? 1 };
}
// ReplicationController and StatefulSet finders, and the generic `/scale` one, would go here:
// this API server serves neither kind, so their pods fall to "found no controllers".
const finders = [podDeployment, podReplicaSet];
// #endregion finders

/** getExpectedScale: the sum of the scales of the controllers that own the pods. */
export function expectedScale(
  l: ControllerListers,
  pods: readonly Pod[],
): { expectedCount: number; unmanagedPods: string[] } {
  const scales = new Map<string, number>();
  const unmanagedPods: string[] = [];
  for (const pod of pods) {
    const ref = getControllerOf(pod);
    if (!ref) {
      unmanagedPods.push(pod.metadata.name ?? "");
      continue;
    }
    if (scales.has(ref.uid)) continue;
    let found = false;
    for (const finder of finders) {
      const cs = finder(l, ref, pod.metadata.namespace ?? "");
      if (cs) {
        scales.set(cs.uid, cs.scale);
        found = true;
        break;
      }
    }
    if (!found) throw new Error(`found no controllers for pod "${pod.metadata.name}"`);
  }
  let expectedCount = 0;
  for (const s of scales.values()) expectedCount += s;
  return { expectedCount, unmanagedPods };
}

// #region expected-pod-count
export interface ExpectedPodCount {
  expectedCount: number;
  desiredHealthy: number;
  unmanagedPods: string[];
}

/**
 * getExpectedPodCount: maxUnavailable (count or %) and a percentage minAvailable take the
 * controllers' scale as the total; an integer minAvailable counts the matching pods.
 */
export function getExpectedPodCount(
  pdb: PodDisruptionBudget,
  pods: readonly Pod[],
  l: ControllerListers,
): ExpectedPodCount {
  const { minAvailable, maxUnavailable } = pdb.spec ?? {};
  if (maxUnavailable !== undefined) {
    const { expectedCount, unmanagedPods } = expectedScale(l, pods);
    const max = scaled(maxUnavailable, expectedCount);
    return { expectedCount, desiredHealthy: Math.max(0, expectedCount - max), unmanagedPods };
  }
  if (typeof minAvailable === "number") {
    return { expectedCount: pods.length, desiredHealthy: minAvailable, unmanagedPods: [] };
  }
  if (typeof minAvailable === "string") {
    const { expectedCount, unmanagedPods } = expectedScale(l, pods);
    return { expectedCount, desiredHealthy: scaled(minAvailable, expectedCount), unmanagedPods };
  }
  return { expectedCount: 0, desiredHealthy: 0, unmanagedPods: [] };
}
// #endregion expected-pod-count

/** GetScaledValueFromIntOrPercent, rounding up (a malformed percentage throws, as upstream's errors). */
function scaled(v: IntOrString, total: number): number {
  return getScaledValueFromIntOrPercent(v, total, true);
}

// #region healthy
/**
 * buildDisruptedPodMap: the evictions still in flight — pods the status lists as disrupted,
 * not yet being deleted, evicted less than DeletionTimeout ago — and when the oldest of them
 * expires (the controller looks again then).
 */
export function buildDisruptedPodMap(
  pods: readonly Pod[],
  pdb: PodDisruptionBudget,
  nowMs: number,
): { disruptedPods: Record<string, string>; recheckMs?: number } {
  const listed = pdb.status?.disruptedPods;
  const disruptedPods: Record<string, string> = {};
  let recheckMs: number | undefined;
  if (!listed) return { disruptedPods };
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue; // its deletion has landed: no longer in flight
    const at = listed[pod.metadata.name ?? ""];
    if (at === undefined) continue;
    const expectedDeletion = Date.parse(at) + DeletionTimeoutMs;
    // Upstream records a NotDeleted event for a pod that outlived its eviction; it counts again.
    if (expectedDeletion < nowMs) continue;
    if (recheckMs === undefined || expectedDeletion < recheckMs) recheckMs = expectedDeletion;
    disruptedPods[pod.metadata.name ?? ""] = at;
  }
  return { disruptedPods, recheckMs };
}

/** countHealthyPods: Ready pods, neither being deleted nor evicted a moment ago. */
export function countHealthyPods(
  pods: readonly Pod[],
  disruptedPods: Record<string, string>,
  nowMs: number,
): number {
  let healthy = 0;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const at = disruptedPods[pod.metadata.name ?? ""];
    if (at !== undefined && Date.parse(at) + DeletionTimeoutMs > nowMs) continue;
    if (isPodReady(pod)) healthy++;
  }
  return healthy;
}
// #endregion healthy

// #region condition
/**
 * SetStatusCondition: replace the condition of that type; lastTransitionTime moves only when
 * the status does (a new reason with the same status keeps the old time).
 */
export function setStatusCondition(
  conditions: MetaCondition[],
  c: Omit<MetaCondition, "lastTransitionTime">,
  now: string,
): void {
  const i = conditions.findIndex((x) => x.type === c.type);
  if (i < 0) {
    conditions.push({ ...c, lastTransitionTime: now });
    return;
  }
  const old = conditions[i];
  conditions[i] = { ...c, lastTransitionTime: old.status === c.status ? old.lastTransitionTime : now };
}

/** UpdateDisruptionAllowedCondition: True/SufficientPods when a disruption is allowed, else False/InsufficientPods. */
export function updateDisruptionAllowedCondition(pdb: PodDisruptionBudget, now: string): void {
  const status = pdb.status!;
  status.conditions ??= [];
  const allowed = status.disruptionsAllowed > 0;
  setStatusCondition(
    status.conditions,
    {
      type: DisruptionAllowedCondition,
      status: allowed ? "True" : "False",
      reason: allowed ? SufficientPodsReason : InsufficientPodsReason,
      message: "",
      observedGeneration: status.observedGeneration,
    },
    now,
  );
}

/** ConditionsAreUpToDate: the condition exists, matches the count, and the status is for this generation. */
export function conditionsAreUpToDate(pdb: PodDisruptionBudget): boolean {
  const status = pdb.status;
  const cond = status?.conditions?.find((c) => c.type === DisruptionAllowedCondition);
  if (!status || !cond) return false;
  if ((status.observedGeneration ?? 0) !== (pdb.metadata.generation ?? 0)) return false;
  return status.disruptionsAllowed > 0
    ? cond.status === "True" && cond.reason === SufficientPodsReason
    : cond.status === "False" && cond.reason === InsufficientPodsReason;
}
// #endregion condition
