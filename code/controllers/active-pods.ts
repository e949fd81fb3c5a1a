/**
 * Active pods and their ranking for deletion — which pods a controller counts, and which it
 * deletes first when there are too many.
 * Mirrors kubernetes/kubernetes pkg/controller/controller_utils.go (IsPodActive, FilterActivePods,
 * ActivePodsWithRanks, podReadyTime, maxContainerRestarts, afterOrZero, logarithmicRankDiff) and
 * pkg/api/v1/pod/util.go (IsPodReady, IsPodAvailable), pkg/apis/core/helper
 * (GetDeletionCostFromPodAnnotations).
 *
 * Solves:
 * - a pod that is terminating, or has finished (Succeeded / Failed), no longer serves: it must not
 *   count towards `replicas`, or a ReplicaSet whose pods all crashed out would think it is full;
 * - scaling down should hurt the service least: delete pods that do nothing yet (unscheduled,
 *   pending, not ready) before pods that serve, and young pods before old ones — but not always
 *   the very youngest, so timestamps are compared in log2 buckets with a UID tie-break (a pseudo-
 *   random pick among pods of about the same age).
 *
 * Invariants (lessActivePodsWithRanks(a, b) is true when a should be deleted before b; the first
 * rule that tells them apart decides):
 * 1. unassigned (no spec.nodeName) before assigned;
 * 2. Pending before Unknown before Running;
 * 3. not ready before ready;
 * 4. lower `controller.kubernetes.io/pod-deletion-cost` before higher;
 * 5. higher rank (more related pods on the same node) before lower;
 * 6. both ready: ready more recently before ready longer (log2 buckets, then UID);
 * 7. more container restarts before fewer;
 * 8. created more recently before older (log2 buckets, then UID); no timestamp first.
 *
 * @upstream kubernetes/kubernetes pkg/controller/controller_utils.go (IsPodActive, FilterActivePods, ActivePodsWithRanks, podPhaseToOrdinal, podReadyTime, maxContainerRestarts, afterOrZero, logarithmicRankDiff)
 * @upstream kubernetes/kubernetes pkg/api/v1/pod/util.go (IsPodReady, IsPodAvailable, GetPodReadyCondition)
 * @upstream kubernetes/kubernetes pkg/apis/core/helper/helpers.go (GetDeletionCostFromPodAnnotations)
 * @chapter 04-informers
 */

import type { Pod, PodCondition } from "../api/core.ts";

// #region active
/** Running or about to: not finished, not being deleted (IsPodActive). */
export function isPodActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== "Succeeded" && phase !== "Failed" && !p.metadata.deletionTimestamp;
}

export function filterActivePods(pods: readonly Pod[]): Pod[] {
  return pods.filter(isPodActive);
}
// #endregion active

// #region ready
export function getPodReadyCondition(pod: Pod): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === "Ready");
}

/** The Ready condition is True (IsPodReady). */
export function isPodReady(pod: Pod): boolean {
  return getPodReadyCondition(pod)?.status === "True";
}

/** Ready for longer than minReadySeconds (IsPodAvailable); `nowMs` on the caller's clock. */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodReady(pod)) return false;
  if (!minReadySeconds) return true;
  const since = parseTime(getPodReadyCondition(pod)?.lastTransitionTime);
  return since !== 0 && since + minReadySeconds * 1000 < nowMs;
}
// #endregion ready

/** An RFC 3339 time in ms, or 0 for none (Go's zero time). */
function parseTime(t: string | null | undefined): number {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : ms;
}

export const PodDeletionCost = "controller.kubernetes.io/pod-deletion-cost";

/** The pod-deletion-cost annotation as an int32; absent or malformed is 0. */
export function getDeletionCostFromPodAnnotations(annotations: Record<string, string> | undefined): number {
  const v = annotations?.[PodDeletionCost];
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return 0;
  const n = Number(v);
  return n < -(2 ** 31) || n > 2 ** 31 - 1 ? 0 : n;
}

const podPhaseToOrdinal: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
const ordinal = (p: Pod) => podPhaseToOrdinal[p.status?.phase ?? ""] ?? 0;

function podReadyTime(pod: Pod): number {
  return isPodReady(pod) ? parseTime(getPodReadyCondition(pod)?.lastTransitionTime) : 0;
}

function maxContainerRestarts(pod: Pod): number {
  let max = 0;
  for (const c of pod.status?.containerStatuses ?? []) max = Math.max(max, c.restartCount ?? 0);
  return max;
}

/** t1 comes first: a zero time before any, else the later one (afterOrZero). */
function afterOrZero(t1: number, t2: number): boolean {
  if (t1 === 0 || t2 === 0) return t1 === 0;
  return t1 > t2;
}

/** floor(log2(age in ns)) of each, subtracted; ages in Go's nanoseconds keep upstream's buckets. */
export function logarithmicRankDiff(t1: number, t2: number, now: number): number {
  const rank = (t: number) => {
    const dNs = (now - t) * 1e6;
    return dNs > 0 ? Math.floor(Math.log2(dNs)) : -1;
  };
  return rank(t1) - rank(t2);
}

// #region ranking
/** One pod and its rank: how many active related pods share its node. */
export interface RankedPod {
  pod: Pod;
  rank: number;
}

/** Should `a` be deleted before `b`? (ActivePodsWithRanks.Less, with LogarithmicScaleDown on.) */
export function lessActivePodsWithRanks(a: RankedPod, b: RankedPod, now: number): boolean {
  const pa = a.pod;
  const pb = b.pod;
  const na = pa.spec.nodeName ?? "";
  const nb = pb.spec.nodeName ?? "";
  // 1. Unassigned < assigned.
  if (na !== nb && (na === "" || nb === "")) return na === "";
  // 2. Pending < Unknown < Running.
  if (ordinal(pa) !== ordinal(pb)) return ordinal(pa) < ordinal(pb);
  // 3. Not ready < ready.
  if (isPodReady(pa) !== isPodReady(pb)) return !isPodReady(pa);
  // 4. Lower pod-deletion-cost < higher.
  const ca = getDeletionCostFromPodAnnotations(pa.metadata.annotations);
  const cb = getDeletionCostFromPodAnnotations(pb.metadata.annotations);
  if (ca !== cb) return ca < cb;
  // 5. Doubled up (more related pods on its node) < not doubled up.
  if (a.rank !== b.rank) return a.rank > b.rank;
  // 6. Both ready: ready for less time < ready for more.
  if (isPodReady(pa) && isPodReady(pb)) {
    const ra = podReadyTime(pa);
    const rb = podReadyTime(pb);
    if (ra !== rb) return compareTimes(ra, rb, pa, pb, now);
  }
  // 7. More container restarts < fewer.
  if (maxContainerRestarts(pa) !== maxContainerRestarts(pb))
    return maxContainerRestarts(pa) > maxContainerRestarts(pb);
  // 8. No creation time < newer < older.
  const ta = parseTime(pa.metadata.creationTimestamp);
  const tb = parseTime(pb.metadata.creationTimestamp);
  if (ta !== tb) return compareTimes(ta, tb, pa, pb, now);
  return false;
}

function compareTimes(ta: number, tb: number, pa: Pod, pb: Pod, now: number): boolean {
  if (now === 0 || ta === 0 || tb === 0) return afterOrZero(ta, tb);
  const diff = logarithmicRankDiff(ta, tb, now);
  // Same bucket: the UID decides, an order that is arbitrary but stable.
  if (diff === 0) return (pa.metadata.uid ?? "") < (pb.metadata.uid ?? "");
  return diff < 0;
}

/** The pods sorted so that the first ones are the ones to delete (sort.Sort(ActivePodsWithRanks)). */
export function sortActivePodsWithRanks(pods: readonly RankedPod[], now: number): RankedPod[] {
  return [...pods].sort((a, b) =>
    lessActivePodsWithRanks(a, b, now) ? -1 : lessActivePodsWithRanks(b, a, now) ? 1 : 0,
  );
}
// #endregion ranking
