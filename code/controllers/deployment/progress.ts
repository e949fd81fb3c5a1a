/**
 * Rollout progress — the Progressing condition and the progress deadline: a rollout that makes
 * no progress for `progressDeadlineSeconds` is reported as failed, one that completes says so.
 * Mirrors kubernetes/kubernetes pkg/controller/deployment/progress.go.
 *
 * Solves:
 * - `kubectl rollout status` must end: with success once the new ReplicaSet is complete
 *   (Progressing True / NewReplicaSetAvailable), with an error once the deadline passed
 *   (Progressing False / ProgressDeadlineExceeded);
 * - "no progress" can only be noticed at a moment when nothing happens — no event comes: the
 *   controller puts the Deployment back on its queue for the moment the deadline falls due;
 * - progress resets the clock: lastUpdateTime moves on every step forward, lastTransitionTime
 *   only when the status flips.
 *
 * Invariants:
 * - a paused Deployment, or one without a deadline, is never timed out;
 * - a Deployment already complete (Replicas == UpdatedReplicas, reason NewReplicaSetAvailable)
 *   is not looked at again: a later resync must not report progress where there was none;
 * - a ReplicaFailure of the new ReplicaSet wins over one of an old ReplicaSet.
 *
 * @upstream kubernetes/kubernetes pkg/controller/deployment/progress.go (syncRolloutStatus, getReplicaFailures, requeueStuckDeployment)
 * @chapter 04-informers
 */

import type { Deployment, DeploymentStatus, ReplicaSet } from "../../api/apps.ts";
import { calculateStatus, type DeploymentSyncContext, statusEqual, updateDeploymentStatus } from "./sync.ts";
import {
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  getDeploymentCondition,
  hasProgressDeadline,
  NewRSAvailableReason,
  newDeploymentCondition,
  ReplicaSetUpdatedReason,
  removeDeploymentCondition,
  replicaSetToDeploymentCondition,
  setDeploymentCondition,
  TimedOutReason,
} from "./util/deployment-util.ts";

// #region next-progressing
/**
 * The status with the Progressing condition this moment calls for: complete, progressing (the
 * condition refreshed, its lastTransitionTime kept), or timed out — in that order of precedence.
 * Pure: the clock is `nowMs`.
 */
export function progressingStatus(
  d: Deployment,
  newRS: ReplicaSet | undefined,
  base: DeploymentStatus,
  nowMs: number,
): DeploymentStatus {
  const newStatus = structuredClone(base);
  if (!hasProgressDeadline(d)) removeDeploymentCondition(newStatus, "Progressing");
  const currentCond = getDeploymentCondition(d.status, "Progressing");
  // One active ReplicaSet, already reported complete: a resync, not a rollout.
  const isCompleteDeployment =
    (newStatus.replicas ?? 0) === (newStatus.updatedReplicas ?? 0) &&
    currentCond?.reason === NewRSAvailableReason;
  if (hasProgressDeadline(d) && !d.spec.paused && !isCompleteDeployment) {
    const what = newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${d.metadata.name}"`;
    if (deploymentComplete(d, newStatus)) {
      setDeploymentCondition(
        newStatus,
        newDeploymentCondition(
          "Progressing",
          "True",
          NewRSAvailableReason,
          `${what} has successfully progressed.`,
          nowMs,
        ),
      );
    } else if (deploymentProgressing(d, newStatus)) {
      const condition = newDeploymentCondition(
        "Progressing",
        "True",
        ReplicaSetUpdatedReason,
        `${what} is progressing.`,
        nowMs,
      );
      // Same reason again must still move lastUpdateTime (setDeploymentCondition would not):
      // remove, then set, keeping the transition time if it was True already.
      if (currentCond) {
        if (currentCond.status === "True") condition.lastTransitionTime = currentCond.lastTransitionTime;
        removeDeploymentCondition(newStatus, "Progressing");
      }
      setDeploymentCondition(newStatus, condition);
    } else if (deploymentTimedOut(d, newStatus, nowMs)) {
      setDeploymentCondition(
        newStatus,
        newDeploymentCondition(
          "Progressing",
          "False",
          TimedOutReason,
          `${what} has timed out progressing.`,
          nowMs,
        ),
      );
    }
  }
  return newStatus;
}
// #endregion next-progressing

// #region sync-rollout-status
/** Computes the status with its conditions and writes it if it changed; else maybe requeues (syncRolloutStatus). */
export async function syncRolloutStatus(
  dc: DeploymentSyncContext,
  allRSs: (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
): Promise<void> {
  const now = dc.clock.now();
  const newStatus = progressingStatus(d, newRS, calculateStatus(allRSs, newRS, d, now), now);
  // Only one ReplicaFailure is carried over.
  const failures = getReplicaFailures(allRSs, newRS);
  if (failures.length > 0) setDeploymentCondition(newStatus, failures[0]);
  else removeDeploymentCondition(newStatus, "ReplicaFailure");

  if (statusEqual(d.status, newStatus)) {
    requeueStuckDeployment(dc, d, newStatus);
    return;
  }
  d.status = newStatus;
  await updateDeploymentStatus(dc, d);
}
// #endregion sync-rollout-status

/** Folds a ReplicaSet's ReplicaFailure into Deployment conditions, new ReplicaSet first (getReplicaFailures). */
export function getReplicaFailures(
  allRSs: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
) {
  const of = (rs: ReplicaSet) =>
    (rs.status?.conditions ?? [])
      .filter((c) => c.type === "ReplicaFailure")
      .map(replicaSetToDeploymentCondition);
  const fromNew = newRS ? of(newRS) : [];
  if (fromNew.length > 0) return fromNew;
  return allRSs.flatMap((rs) => (rs ? of(rs) : []));
}

// #region requeue-stuck
/**
 * When a rollout stands still, no event will wake the controller when its deadline passes: put
 * the key back for that moment (+1 s, timers are not exact). Returns the delay in ms, 0 for
 * "now, rate limited", -1 for "no need" (requeueStuckDeployment).
 */
export function stuckDeploymentDelay(d: Deployment, newStatus: DeploymentStatus, nowMs: number): number {
  const currentCond = getDeploymentCondition(d.status, "Progressing");
  if (!hasProgressDeadline(d) || !currentCond) return -1;
  if (deploymentComplete(d, newStatus) || currentCond.reason === TimedOutReason) return -1;
  const last = Date.parse(currentCond.lastUpdateTime ?? "");
  if (Number.isNaN(last)) return -1;
  const after = last + (d.spec.progressDeadlineSeconds ?? 0) * 1000 - nowMs;
  return after < 1000 ? 0 : after;
}

export function requeueStuckDeployment(
  dc: DeploymentSyncContext,
  d: Deployment,
  newStatus: DeploymentStatus,
): number {
  const after = stuckDeploymentDelay(d, newStatus, dc.clock.now());
  if (after === 0) dc.enqueueRateLimited(d);
  else if (after > 0) dc.enqueueAfter(d, after + 1000);
  return after;
}
// #endregion requeue-stuck
