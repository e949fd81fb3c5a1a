/**
 * Deployment sync — what every strategy shares: find (or create) the new ReplicaSet and keep the
 * revisions in step, scale proportionally when the Deployment is resized, pause, delete old
 * history, and compute the status.
 * Mirrors kubernetes/kubernetes pkg/controller/deployment/sync.go.
 *
 * Solves:
 * - the new ReplicaSet is the one whose template equals the Deployment's (ignoring the hash);
 *   if none exists it is created under a name derived from the template, so a second try after
 *   a lost answer finds it (AlreadyExists) instead of making another;
 * - a name taken by someone else's ReplicaSet (a hash collision) must not stall the Deployment
 *   forever: `status.collisionCount` goes up, which changes the hash on the next try;
 * - `kubectl scale` during a rollout must not be mistaken for a rollout step: when an active
 *   ReplicaSet's `desired-replicas` differs from the Deployment's replicas, every active
 *   ReplicaSet gets its share of the change (proportional scaling), the rollout waits;
 * - a paused Deployment still scales, but creates no new ReplicaSet;
 * - old ReplicaSets pile up with every rollout: beyond `revisionHistoryLimit` the oldest empty
 *   ones are deleted (they are the rollback history, so only those already scaled to 0 and settled).
 *
 * Invariants:
 * - the new ReplicaSet's revision is max(old revisions) + 1 and is copied to the Deployment;
 * - the status is written only when it differs from the one the Deployment has;
 * - observedGeneration in the status is the generation this sync read.
 *
 * @upstream kubernetes/kubernetes pkg/controller/deployment/sync.go (syncStatusOnly, sync, checkPausedConditions, getAllReplicaSetsAndSyncRevision, getNewReplicaSet, scale, scaleReplicaSetAndRecordEvent, scaleReplicaSet, cleanupDeployment, syncDeploymentStatus, calculateStatus, isScalingEvent)
 * @chapter 04-informers
 */

import type { Deployment, DeploymentStatus, ReplicaSet } from "../../api/apps.ts";
import type { GroupVersionKind } from "../../api/schema.ts";
import { isAlreadyExists, isNotFound } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import type { NamespaceLister } from "../../client/tools/cache/listers.ts";
import type { Clock } from "../../client/util/clock.ts";
import type { EventRecorder } from "../pod-control.ts";
import { getControllerOf, newControllerRef } from "../pod-control.ts";
import { hasStatusCause, NamespaceTerminatingCause } from "../replicaset/replica-set.ts";
import {
  computeHash,
  filterActiveReplicaSets,
  semanticEqual,
  sortBySizeNewer,
  sortBySizeOlder,
} from "./util/controller-utils.ts";
import {
  DefaultDeploymentUniqueLabelKey,
  equalIgnoreHash,
  FailedRSCreateReason,
  FoundNewRSReason,
  findActiveOrLatest,
  findNewReplicaSet,
  findOldReplicaSets,
  getActualReplicaCountForReplicaSets,
  getAvailableReplicaCountForReplicaSets,
  getDeploymentCondition,
  getDesiredReplicasAnnotation,
  getReadyReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  getReplicaSetProportion,
  hasProgressDeadline,
  hasRevisionHistoryLimit,
  isRollingUpdate,
  isSaturated,
  MinimumReplicasAvailable,
  MinimumReplicasUnavailable,
  maxRevision,
  maxSurge,
  maxUnavailable,
  NewReplicaSetReason,
  newDeploymentCondition,
  newRSNewReplicas,
  PausedDeployReason,
  ResumedDeployReason,
  RevisionAnnotation,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  setDeploymentCondition,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  sortByRevision,
  TimedOutReason,
} from "./util/deployment-util.ts";

export const deploymentKind: GroupVersionKind = { group: "apps", version: "v1", kind: "Deployment" };

// #region context
/** What the sync functions need of the controller (upstream: methods on DeploymentController). */
export interface DeploymentSyncContext {
  client: Clientset;
  rsLister(namespace: string): NamespaceLister<ReplicaSet>;
  clock: Clock;
  recorder: EventRecorder;
  /** Look at this Deployment again after `ms` (requeueStuckDeployment). */
  enqueueAfter(d: Deployment, ms: number): void;
  enqueueRateLimited(d: Deployment): void;
}
// #endregion context

/**
 * UpdateStatus, then take the server's metadata (its resourceVersion) into `d`, so that a second
 * write in the same sync does not conflict with the first. Upstream keeps the stale copy and
 * retries the whole sync on the Conflict.
 */
export async function updateDeploymentStatus(dc: DeploymentSyncContext, d: Deployment): Promise<void> {
  const updated = await dc.client.appsV1.deployments(d.metadata.namespace ?? "").updateStatus(d);
  d.metadata = updated.metadata;
}

// #region sync
/** A Deployment being deleted: only the status (syncStatusOnly). */
export async function syncStatusOnly(
  dc: DeploymentSyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(dc, d, rsList, false);
  await syncDeploymentStatus(dc, [...oldRSs, newRS], newRS, d);
}

/** A scaling event or a paused Deployment: scale, no rollout (sync). */
export async function sync(dc: DeploymentSyncContext, d: Deployment, rsList: ReplicaSet[]): Promise<void> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(dc, d, rsList, false);
  await scale(dc, d, newRS, oldRSs);
  // Paused: nothing is rolling, so history may be trimmed now.
  if (d.spec.paused) await cleanupDeployment(dc, oldRSs, d);
  await syncDeploymentStatus(dc, [...oldRSs, newRS], newRS, d);
}

/**
 * Pausing sets Progressing to Unknown/DeploymentPaused and resuming to Unknown/DeploymentResumed:
 * the time paused must not count against progressDeadlineSeconds (checkPausedConditions).
 */
export async function checkPausedConditions(dc: DeploymentSyncContext, d: Deployment): Promise<void> {
  if (!hasProgressDeadline(d)) return;
  const cond = getDeploymentCondition(d.status, "Progressing");
  // A reported timeout stays until progress is made.
  if (cond?.reason === TimedOutReason) return;
  const pausedCondExists = cond?.reason === PausedDeployReason;
  const now = dc.clock.now();
  d.status ??= {};
  if (d.spec.paused && !pausedCondExists) {
    setDeploymentCondition(
      d.status,
      newDeploymentCondition("Progressing", "Unknown", PausedDeployReason, "Deployment is paused", now),
    );
  } else if (!d.spec.paused && pausedCondExists) {
    setDeploymentCondition(
      d.status,
      newDeploymentCondition("Progressing", "Unknown", ResumedDeployReason, "Deployment is resumed", now),
    );
  } else {
    return;
  }
  await updateDeploymentStatus(dc, d);
}
// #endregion sync

// #region get-new-replica-set
/** The new ReplicaSet (created when asked and missing) and all old ones, revisions in step. */
export async function getAllReplicaSetsAndSyncRevision(
  dc: DeploymentSyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
  createIfNotExisted: boolean,
): Promise<{ newRS: ReplicaSet | undefined; oldRSs: ReplicaSet[] }> {
  const { allOldRSs } = findOldReplicaSets(d, rsList);
  const newRS = await getNewReplicaSet(dc, d, rsList, allOldRSs, createIfNotExisted);
  return { newRS, oldRSs: allOldRSs };
}

/**
 * The ReplicaSet with the Deployment's template. Found: its annotations and minReadySeconds are
 * brought up to date, and its revision copied to the Deployment. Missing and asked to: created as
 * `<deployment>-<hash>`, owned by the Deployment, at the size a rollout may start with.
 */
export async function getNewReplicaSet(
  dc: DeploymentSyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
  oldRSs: ReplicaSet[],
  createIfNotExisted: boolean,
): Promise<ReplicaSet | undefined> {
  const ns = d.metadata.namespace ?? "";
  const existing = findNewReplicaSet(d, rsList);
  const newRevision = String(maxRevision(oldRSs) + 1);
  const now = dc.clock.now();

  if (existing) {
    const rsCopy = structuredClone(existing);
    const annotationsUpdated = setNewReplicaSetAnnotations(d, rsCopy, newRevision, true);
    const minReadySecondsNeedsUpdate = (rsCopy.spec.minReadySeconds ?? 0) !== (d.spec.minReadySeconds ?? 0);
    if (annotationsUpdated || minReadySecondsNeedsUpdate) {
      rsCopy.spec.minReadySeconds = d.spec.minReadySeconds ?? 0;
      return dc.client.appsV1.replicaSets(ns).update(rsCopy);
    }
    // The ReplicaSet's revision is the reliable one: the Deployment's copy may have failed to save.
    let needsUpdate = setDeploymentRevision(d, rsCopy.metadata.annotations?.[RevisionAnnotation] ?? "");
    // A Deployment that never reported progress starts being watched from here.
    if (hasProgressDeadline(d) && !getDeploymentCondition(d.status, "Progressing")) {
      d.status ??= {};
      const msg = `Found new replica set "${rsCopy.metadata.name}"`;
      setDeploymentCondition(
        d.status,
        newDeploymentCondition("Progressing", "True", FoundNewRSReason, msg, now),
      );
      needsUpdate = true;
    }
    if (needsUpdate) await updateDeploymentStatus(dc, d);
    return rsCopy;
  }
  if (!createIfNotExisted) return undefined;

  const template = structuredClone(d.spec.template);
  const hash = computeHash(template, d.status?.collisionCount);
  template.metadata = {
    ...template.metadata,
    labels: { ...template.metadata?.labels, [DefaultDeploymentUniqueLabelKey]: hash },
  };
  const selector = structuredClone(d.spec.selector);
  selector.matchLabels = { ...selector.matchLabels, [DefaultDeploymentUniqueLabelKey]: hash };
  const newRS: ReplicaSet = {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: {
      // Deterministic: a retry hits AlreadyExists instead of making a twin.
      name: `${d.metadata.name}-${hash}`,
      namespace: ns,
      ownerReferences: [newControllerRef(d, deploymentKind)],
      labels: template.metadata.labels,
    },
    spec: { replicas: 0, minReadySeconds: d.spec.minReadySeconds ?? 0, selector, template },
  };
  newRS.spec.replicas = newRSNewReplicas(d, [...oldRSs, newRS], newRS);
  setNewReplicaSetAnnotations(d, newRS, newRevision, false);

  let created: ReplicaSet;
  let alreadyExists = false;
  try {
    created = await dc.client.appsV1.replicaSets(ns).create(newRS);
  } catch (err) {
    if (isAlreadyExists(err)) {
      alreadyExists = true;
      // A slow cache or a quick resync: is it ours, with our template? Then it is the new one.
      const rs = dc.rsLister(ns).get(newRS.metadata.name ?? "");
      if (!rs) throw err;
      const ref = getControllerOf(rs);
      if (ref?.uid === d.metadata.uid && equalIgnoreHash(d.spec.template, rs.spec.template)) {
        created = rs;
      } else {
        // A hash collision: another template holds the name. A new count gives a new hash next time.
        d.status ??= {};
        d.status.collisionCount = (d.status.collisionCount ?? 0) + 1;
        await updateDeploymentStatus(dc, d).catch(() => {});
        throw err;
      }
    } else if (hasStatusCause(err, NamespaceTerminatingCause)) {
      throw err;
    } else {
      const msg = `Failed to create new replica set "${newRS.metadata.name}": ${(err as Error).message}`;
      if (hasProgressDeadline(d)) {
        d.status ??= {};
        setDeploymentCondition(
          d.status,
          newDeploymentCondition("Progressing", "False", FailedRSCreateReason, msg, now),
        );
        // The create error is the one to report; a failed status write adds nothing.
        await updateDeploymentStatus(dc, d).catch(() => {});
      }
      dc.recorder(d, "Warning", FailedRSCreateReason, msg);
      throw err;
    }
  }
  const newReplicasCount = replicasOf(newRS);
  if (!alreadyExists && newReplicasCount > 0)
    dc.recorder(
      d,
      "Normal",
      "ScalingReplicaSet",
      `Scaled up replica set ${created.metadata.name} from 0 to ${newReplicasCount}`,
    );

  let needsUpdate = setDeploymentRevision(d, newRevision);
  if (!alreadyExists && hasProgressDeadline(d)) {
    d.status ??= {};
    const msg = `Created new replica set "${created.metadata.name}"`;
    setDeploymentCondition(
      d.status,
      newDeploymentCondition("Progressing", "True", NewReplicaSetReason, msg, now),
    );
    needsUpdate = true;
  }
  if (needsUpdate) await updateDeploymentStatus(dc, d);
  return created;
}
// #endregion get-new-replica-set

// #region scale
/**
 * Resizes the ReplicaSets to a new Deployment size. One active ReplicaSet (or none): it gets all.
 * A saturated new one: the old go to 0. Otherwise, for a rolling update, the difference between
 * replicas + maxSurge and what all active ReplicaSets hold is shared out by their sizes, the
 * leftover of rounding going to the largest (scale).
 */
export async function scale(
  dc: DeploymentSyncContext,
  d: Deployment,
  newRS: ReplicaSet | undefined,
  oldRSs: ReplicaSet[],
): Promise<void> {
  const activeOrLatest = findActiveOrLatest(newRS, oldRSs);
  if (activeOrLatest) {
    if (replicasOf(activeOrLatest) === replicasOf(d)) return;
    await scaleReplicaSetAndRecordEvent(dc, activeOrLatest, replicasOf(d), d);
    return;
  }
  if (isSaturated(d, newRS)) {
    for (const old of filterActiveReplicaSets(oldRSs)) await scaleReplicaSetAndRecordEvent(dc, old, 0, d);
    return;
  }
  if (!isRollingUpdate(d)) return;

  let allRSs = filterActiveReplicaSets([...oldRSs, newRS]);
  const allRSsReplicas = getReplicaCountForReplicaSets(allRSs);
  const allowedSize = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
  const toAdd = allowedSize - allRSsReplicas;
  // Up: newer first among equals; down: older first among equals.
  if (toAdd > 0) allRSs = sortBySizeNewer(allRSs);
  else if (toAdd < 0) allRSs = sortBySizeOlder(allRSs);

  let added = 0;
  const nameToSize = new Map<string, number>();
  for (const rs of allRSs) {
    if (toAdd !== 0) {
      const proportion = getReplicaSetProportion(rs, d, toAdd, added);
      nameToSize.set(rs.metadata.name ?? "", replicasOf(rs) + proportion);
      added += proportion;
    } else {
      nameToSize.set(rs.metadata.name ?? "", replicasOf(rs));
    }
  }
  for (const [i, rs] of allRSs.entries()) {
    const name = rs.metadata.name ?? "";
    // Rounding leftovers go to the largest.
    if (i === 0 && toAdd !== 0)
      nameToSize.set(name, Math.max(0, (nameToSize.get(name) ?? 0) + toAdd - added));
    await scaleReplicaSet(dc, rs, nameToSize.get(name) ?? 0, d);
  }
}
// #endregion scale

// #region scale-replica-set
export async function scaleReplicaSetAndRecordEvent(
  dc: DeploymentSyncContext,
  rs: ReplicaSet,
  newScale: number,
  d: Deployment,
): Promise<{ scaled: boolean; rs: ReplicaSet }> {
  if (replicasOf(rs) === newScale) return { scaled: false, rs };
  return scaleReplicaSet(dc, rs, newScale, d);
}

/** Writes the size and the replica annotations (the Deployment size it was sized for) in one update. */
export async function scaleReplicaSet(
  dc: DeploymentSyncContext,
  rs: ReplicaSet,
  newScale: number,
  d: Deployment,
): Promise<{ scaled: boolean; rs: ReplicaSet }> {
  const sizeNeedsUpdate = replicasOf(rs) !== newScale;
  const max = replicasOf(d) + maxSurge(d);
  if (!sizeNeedsUpdate && !replicasAnnotationsNeedUpdate(rs, replicasOf(d), max))
    return { scaled: false, rs };
  const oldScale = replicasOf(rs);
  const rsCopy = structuredClone(rs);
  rsCopy.spec.replicas = newScale;
  setReplicasAnnotations(rsCopy, replicasOf(d), max);
  const updated = await dc.client.appsV1.replicaSets(rs.metadata.namespace ?? "").update(rsCopy);
  if (sizeNeedsUpdate) {
    const op = oldScale < newScale ? "up" : "down";
    dc.recorder(
      d,
      "Normal",
      "ScalingReplicaSet",
      `Scaled ${op} replica set ${rs.metadata.name} from ${oldScale} to ${newScale}`,
    );
  }
  return { scaled: sizeNeedsUpdate, rs: updated };
}
// #endregion scale-replica-set

// #region cleanup
/** Deletes the oldest old ReplicaSets beyond revisionHistoryLimit that are empty and settled (cleanupDeployment). */
export async function cleanupDeployment(
  dc: DeploymentSyncContext,
  oldRSs: ReplicaSet[],
  d: Deployment,
): Promise<void> {
  if (!hasRevisionHistoryLimit(d)) return;
  const cleanable = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
  const diff = cleanable.length - (d.spec.revisionHistoryLimit ?? 10);
  if (diff <= 0) return;
  const byRevision = sortByRevision(cleanable);
  for (const rs of byRevision.slice(0, diff)) {
    // Still has pods, or the ReplicaSet controller has not caught up with its spec: keep it.
    if (
      (rs.status?.replicas ?? 0) !== 0 ||
      replicasOf(rs) !== 0 ||
      (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0) ||
      rs.metadata.deletionTimestamp
    )
      continue;
    try {
      await dc.client.appsV1.replicaSets(rs.metadata.namespace ?? "").delete(rs.metadata.name ?? "");
    } catch (err) {
      // Stop at the first failure: the API server may be overloaded.
      if (!isNotFound(err)) throw err;
    }
  }
}
// #endregion cleanup

// #region status
/** The status the ReplicaSets add up to, with Available set from maxUnavailable (calculateStatus). */
export function calculateStatus(
  allRSs: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
  nowMs: number,
): DeploymentStatus {
  const availableReplicas = getAvailableReplicaCountForReplicaSets(allRSs);
  const totalReplicas = getReplicaCountForReplicaSets(allRSs);
  // More available than asked for while scaling down: not negative.
  const unavailableReplicas = Math.max(0, totalReplicas - availableReplicas);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation,
    replicas: getActualReplicaCountForReplicaSets(allRSs),
    updatedReplicas: getActualReplicaCountForReplicaSets([newRS]),
    readyReplicas: getReadyReplicaCountForReplicaSets(allRSs),
    availableReplicas,
    unavailableReplicas,
  };
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  if (d.status?.conditions) status.conditions = d.status.conditions.map((c) => ({ ...c }));
  if (availableReplicas >= replicasOf(d) - maxUnavailable(d)) {
    setDeploymentCondition(
      status,
      newDeploymentCondition(
        "Available",
        "True",
        MinimumReplicasAvailable,
        "Deployment has minimum availability.",
        nowMs,
      ),
    );
  } else {
    setDeploymentCondition(
      status,
      newDeploymentCondition(
        "Available",
        "False",
        MinimumReplicasUnavailable,
        "Deployment does not have minimum availability.",
        nowMs,
      ),
    );
  }
  return status;
}

const counts = [
  "observedGeneration",
  "replicas",
  "updatedReplicas",
  "readyReplicas",
  "availableReplicas",
  "unavailableReplicas",
  "collisionCount",
] as const;

/** reflect.DeepEqual of two statuses, where an absent count is 0 (omitempty on the wire). */
export function statusEqual(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  const x = a ?? {};
  return counts.every((k) => (x[k] ?? 0) === (b[k] ?? 0)) && semanticEqual(x.conditions, b.conditions);
}

export async function syncDeploymentStatus(
  dc: DeploymentSyncContext,
  allRSs: (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
): Promise<void> {
  const newStatus = calculateStatus(allRSs, newRS, d, dc.clock.now());
  if (statusEqual(d.status, newStatus)) return;
  d.status = newStatus;
  await updateDeploymentStatus(dc, d);
}
// #endregion status

// #region is-scaling-event
/** An active ReplicaSet was sized for another Deployment size: someone scaled the Deployment (isScalingEvent). */
export async function isScalingEvent(
  dc: DeploymentSyncContext,
  d: Deployment,
  rsList: ReplicaSet[],
): Promise<boolean> {
  const { newRS, oldRSs } = await getAllReplicaSetsAndSyncRevision(dc, d, rsList, false);
  for (const rs of filterActiveReplicaSets([...oldRSs, newRS])) {
    const desired = getDesiredReplicasAnnotation(rs);
    if (desired === undefined) continue;
    if (desired !== replicasOf(d)) return true;
  }
  return false;
}
// #endregion is-scaling-event
