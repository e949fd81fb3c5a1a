/**
 * Recreate — all old pods go first, then the new ones come: for software that must never run two
 * versions at once (a schema migration, a single-writer lock).
 * Mirrors kubernetes/kubernetes pkg/controller/deployment/recreate.go.
 *
 * Solves:
 * - "scaled to 0" is not "gone": the old ReplicaSets' pods may still be running (terminating,
 *   or the ReplicaSet controller has not caught up). The new ReplicaSet is created only once no
 *   pod of an old ReplicaSet is left in a non-terminal phase — the pod cache is the proof;
 * - the last old pod's deletion is the moment to continue, and nothing else would say so: the
 *   controller's pod-delete handler wakes a Recreate Deployment when its last pod is gone.
 *
 * Invariants:
 * - the new ReplicaSet is not created while an old pod runs (Succeeded and Failed pods do not
 *   count; Unknown does: it may still be running);
 * - the new ReplicaSet is created at full size: the old ones are empty by then.
 *
 * @upstream kubernetes/kubernetes pkg/controller/deployment/recreate.go (rolloutRecreate, scaleDownOldReplicaSetsForRecreate, oldPodsRunning, scaleUpNewReplicaSetForRecreate)
 * @chapter 04-informers
 */

import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import { syncRolloutStatus } from "./progress.ts";
import {
  cleanupDeployment,
  type DeploymentSyncContext,
  getAllReplicaSetsAndSyncRevision,
  scaleReplicaSetAndRecordEvent,
} from "./sync.ts";
import { filterActiveReplicaSets } from "./util/controller-utils.ts";
import {
  deploymentComplete,
  getActualReplicaCountForReplicaSets,
  replicasOf,
} from "./util/deployment-util.ts";

// #region rollout-recreate
export async function rolloutRecreate(
  dc: DeploymentSyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
  podMap: Map<string, Pod[]>,
): Promise<void> {
  // No new ReplicaSet yet: creating it now would scale up before the old ones are down.
  let { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(dc, d, rsList, false);
  let allRSs = [...oldRSs, newRS];

  if (await scaleDownOldReplicaSetsForRecreate(dc, filterActiveReplicaSets(oldRSs), d))
    return syncRolloutStatus(dc, allRSs, newRS, d);
  // Scaled to 0 is not enough: wait until their pods are gone.
  if (oldPodsRunning(newRS, oldRSs, podMap)) return syncRolloutStatus(dc, allRSs, newRS, d);

  if (!newRS) {
    ({ newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(dc, d, rsList, true));
    allRSs = [...oldRSs, newRS];
  }
  if (newRS) await scaleReplicaSetAndRecordEvent(dc, newRS, replicasOf(d), d);
  if (deploymentComplete(d, d.status ?? {})) await cleanupDeployment(dc, oldRSs, d);
  return syncRolloutStatus(dc, allRSs, newRS, d);
}
// #endregion rollout-recreate

/** Every active old ReplicaSet to 0; true if any was scaled (scaleDownOldReplicaSetsForRecreate). */
export async function scaleDownOldReplicaSetsForRecreate(
  dc: DeploymentSyncContext,
  oldRSs: ReplicaSet[],
  d: Deployment,
): Promise<boolean> {
  let scaled = false;
  for (const [i, rs] of oldRSs.entries()) {
    if (replicasOf(rs) === 0) continue;
    const r = await scaleReplicaSetAndRecordEvent(dc, rs, 0, d);
    if (r.scaled) {
      oldRSs[i] = r.rs;
      scaled = true;
    }
  }
  return scaled;
}

// #region old-pods-running
/** Whether an old ReplicaSet still reports pods, or the cache still has one not Succeeded or Failed (oldPodsRunning). */
export function oldPodsRunning(
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
  podMap: ReadonlyMap<string, readonly Pod[]>,
): boolean {
  if (getActualReplicaCountForReplicaSets(oldRSs) > 0) return true;
  for (const [rsUID, pods] of podMap) {
    if (newRS && newRS.metadata.uid === rsUID) continue;
    for (const pod of pods) {
      const phase = pod.status?.phase;
      // Finished pods run nothing; Unknown (a lost node) may still be running.
      if (phase === "Failed" || phase === "Succeeded") continue;
      return true;
    }
  }
  return false;
}
// #endregion old-pods-running
