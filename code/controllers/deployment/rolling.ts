/**
 * RollingUpdate — replace the pods a few at a time: grow the new ReplicaSet while the total stays
 * within replicas + maxSurge, shrink the old ones while the available pods stay at or above
 * replicas − maxUnavailable, one step per sync, until the new one holds everything.
 * Mirrors kubernetes/kubernetes pkg/controller/deployment/rolling.go.
 *
 * Solves:
 * - a rollout must keep the service up: old pods are removed only as far as the pods that are
 *   available allow, and the new ReplicaSet's unavailable pods count against that margin, so a
 *   new version that never becomes ready cannot drain the old one;
 * - an old ReplicaSet with pods that are not available (crashing, never ready) would block that
 *   margin forever: those are scaled away first, which costs no availability;
 * - each step is decided from the counts alone (spec.replicas and status.availableReplicas of
 *   the ReplicaSets), so a controller restarted mid-rollout continues where it was.
 *
 * Invariants:
 * - Σ spec.replicas over all ReplicaSets never exceeds replicas + maxSurge by the controller's doing;
 * - no scale-down takes the available pods (as the ReplicaSets report them) below replicas − maxUnavailable;
 * - a sync scales up or down, not both: after either it only writes the status.
 *
 * @upstream kubernetes/kubernetes pkg/controller/deployment/rolling.go (rolloutRolling, reconcileNewReplicaSet, reconcileOldReplicaSets, cleanupUnhealthyReplicas, scaleDownOldReplicaSetsForRollingUpdate)
 * @chapter 04-informers
 */

import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import { syncRolloutStatus } from "./progress.ts";
import {
  cleanupDeployment,
  type DeploymentSyncContext,
  getAllReplicaSetsAndSyncRevision,
  scaleReplicaSetAndRecordEvent,
} from "./sync.ts";
import { filterActiveReplicaSets, sortByCreationTimestamp } from "./util/controller-utils.ts";
import {
  deploymentComplete,
  getAvailableReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  maxUnavailable,
  newRSNewReplicas,
  replicasOf,
} from "./util/deployment-util.ts";

// #region rollout-rolling
export async function rolloutRolling(
  dc: DeploymentSyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
): Promise<void> {
  const got = await getAllReplicaSetsAndSyncRevision(dc, d, rsList, true);
  const newRS = got.newRS as ReplicaSet;
  const oldRSs = got.oldRSs;
  const allRSs = [...oldRSs, newRS];

  // Scale up, if we can.
  if (await reconcileNewReplicaSet(dc, allRSs, newRS, d)) return syncRolloutStatus(dc, allRSs, newRS, d);
  // Scale down, if we can.
  if (await reconcileOldReplicaSets(dc, allRSs, filterActiveReplicaSets(oldRSs), newRS, d))
    return syncRolloutStatus(dc, allRSs, newRS, d);
  // Nothing to move: done, or waiting for pods. A finished rollout trims its history.
  if (deploymentComplete(d, d.status ?? {})) await cleanupDeployment(dc, oldRSs, d);
  return syncRolloutStatus(dc, allRSs, newRS, d);
}
// #endregion rollout-rolling

// #region reconcile-new
/** Grows the new ReplicaSet as far as maxSurge allows (or shrinks it to replicas); true if it changed. */
export async function reconcileNewReplicaSet(
  dc: DeploymentSyncContext,
  allRSs: ReplicaSet[],
  newRS: ReplicaSet,
  d: Deployment,
): Promise<boolean> {
  if (replicasOf(newRS) === replicasOf(d)) return false;
  if (replicasOf(newRS) > replicasOf(d))
    return (await scaleReplicaSetAndRecordEvent(dc, newRS, replicasOf(d), d)).scaled;
  const newReplicasCount = newRSNewReplicas(d, allRSs, newRS);
  return (await scaleReplicaSetAndRecordEvent(dc, newRS, newReplicasCount, d)).scaled;
}
// #endregion reconcile-new

// #region reconcile-old
/**
 * How far the old ReplicaSets may shrink now:
 *   maxScaledDown = Σ spec.replicas − (replicas − maxUnavailable) − (new RS's unavailable pods)
 * Unhealthy old pods go first; then old ReplicaSets, oldest first, as availability allows.
 */
export function maxScaledDown(allRSs: readonly ReplicaSet[], newRS: ReplicaSet, d: Deployment): number {
  const allPodsCount = getReplicaCountForReplicaSets(allRSs);
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const newRSUnavailablePodCount = replicasOf(newRS) - (newRS.status?.availableReplicas ?? 0);
  return allPodsCount - minAvailable - newRSUnavailablePodCount;
}

export async function reconcileOldReplicaSets(
  dc: DeploymentSyncContext,
  allRSs: ReplicaSet[],
  oldRSs: ReplicaSet[],
  newRS: ReplicaSet,
  d: Deployment,
): Promise<boolean> {
  if (getReplicaCountForReplicaSets(oldRSs) === 0) return false;
  const max = maxScaledDown(allRSs, newRS, d);
  if (max <= 0) return false;
  // Errors here are not returned, as upstream: the next sync tries again.
  let cleaned: { oldRSs: ReplicaSet[]; cleanupCount: number };
  try {
    cleaned = await cleanupUnhealthyReplicas(dc, oldRSs, d, max);
  } catch {
    return false;
  }
  let scaledDownCount = 0;
  try {
    scaledDownCount = await scaleDownOldReplicaSetsForRollingUpdate(
      dc,
      [...cleaned.oldRSs, newRS],
      cleaned.oldRSs,
      d,
    );
  } catch {
    return false;
  }
  return cleaned.cleanupCount + scaledDownCount > 0;
}
// #endregion reconcile-old

// #region cleanup-unhealthy
/** Removes old pods that are not available, oldest ReplicaSet first, at most `maxCleanupCount` (cleanupUnhealthyReplicas). */
export async function cleanupUnhealthyReplicas(
  dc: DeploymentSyncContext,
  oldRSs: ReplicaSet[],
  d: Deployment,
  maxCleanupCount: number,
): Promise<{ oldRSs: ReplicaSet[]; cleanupCount: number }> {
  const sorted = sortByCreationTimestamp(oldRSs);
  let total = 0;
  for (const [i, target] of sorted.entries()) {
    if (total >= maxCleanupCount) break;
    const replicas = replicasOf(target);
    const available = target.status?.availableReplicas ?? 0;
    if (replicas === 0 || replicas === available) continue;
    const count = Math.min(maxCleanupCount - total, replicas - available);
    // A status from before its own scale-down (more available than asked for): refuse, as upstream.
    if (replicas - count > replicas)
      throw new Error(
        `when cleaning up unhealthy replicas, got invalid request to scale down ${target.metadata.namespace}/${target.metadata.name} ${replicas} -> ${replicas - count}`,
      );
    const { rs } = await scaleReplicaSetAndRecordEvent(dc, target, replicas - count, d);
    total += count;
    sorted[i] = rs;
  }
  return { oldRSs: sorted, cleanupCount: total };
}
// #endregion cleanup-unhealthy

// #region scale-down-old
/** Shrinks old ReplicaSets, oldest first, by what the available pods exceed replicas − maxUnavailable. */
export async function scaleDownOldReplicaSetsForRollingUpdate(
  dc: DeploymentSyncContext,
  allRSs: ReplicaSet[],
  oldRSs: ReplicaSet[],
  d: Deployment,
): Promise<number> {
  const minAvailable = replicasOf(d) - maxUnavailable(d);
  const availablePodCount = getAvailableReplicaCountForReplicaSets(allRSs);
  if (availablePodCount <= minAvailable) return 0;
  const totalScaleDownCount = availablePodCount - minAvailable;
  let total = 0;
  for (const target of sortByCreationTimestamp(oldRSs)) {
    if (total >= totalScaleDownCount) break;
    if (replicasOf(target) === 0) continue;
    const count = Math.min(replicasOf(target), totalScaleDownCount - total);
    if (count < 0)
      throw new Error(
        `when scaling down old RS, got invalid request to scale down ${target.metadata.namespace}/${target.metadata.name} ${replicasOf(target)} -> ${replicasOf(target) - count}`,
      );
    await scaleReplicaSetAndRecordEvent(dc, target, replicasOf(target) - count, d);
    total += count;
  }
  return total;
}
// #endregion scale-down-old
