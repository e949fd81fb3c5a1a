/**
 * Deployment helpers — the pure arithmetic and bookkeeping of a rollout: how many pods may surge
 * or be missing, which ReplicaSet is "new", revision numbers, the annotations the controller
 * writes on its ReplicaSets, and the conditions it reports.
 * Mirrors kubernetes/kubernetes pkg/controller/deployment/util/deployment_util.go.
 *
 * Solves:
 * - maxSurge and maxUnavailable are ints or percentages of `replicas`; rounding must never let
 *   a rollout stall: surge rounds up, unavailable rounds down, and if both come out 0 then
 *   unavailable is 1 (ResolveFenceposts) — validation refuses only an explicit 0 and 0;
 * - a scale (`kubectl scale`) in the middle of a rollout must be told apart from the rollout:
 *   every ReplicaSet carries the `desired-replicas` and `max-replicas` it was sized for, and a
 *   Deployment whose replicas differ from an active ReplicaSet's annotation is being scaled;
 * - `kubectl rollout history` and `undo` read the history from the ReplicaSets alone: each
 *   carries `deployment.kubernetes.io/revision` (and `revision-history` when it came back) and
 *   the Deployment's annotations (`kubernetes.io/change-cause`) as they were at its revision.
 *
 * Invariants:
 * - every function here is pure (the clock is a parameter); none changes its inputs except the
 *   `set*` ones, which change only the object they are given and say whether they did;
 * - conditions keep lastTransitionTime while their status stays the same.
 *
 * @upstream kubernetes/kubernetes pkg/controller/deployment/util/deployment_util.go (RevisionAnnotation, DesiredReplicasAnnotation, MaxReplicasAnnotation, condition reasons, NewDeploymentCondition, GetDeploymentCondition, SetDeploymentCondition, RemoveDeploymentCondition, ReplicaSetToDeploymentCondition, SetDeploymentRevision, MaxRevision, Revision, SetNewReplicaSetAnnotations, copyDeploymentAnnotationsToReplicaSet, FindActiveOrLatest, GetDesiredReplicasAnnotation, SetReplicasAnnotations, ReplicasAnnotationsNeedUpdate, MaxUnavailable, MaxSurge, GetReplicaSetProportion, getReplicaSetFraction, EqualIgnoreHash, FindNewReplicaSet, FindOldReplicaSets, GetReplicaCountForReplicaSets, GetActualReplicaCountForReplicaSets, GetReadyReplicaCountForReplicaSets, GetAvailableReplicaCountForReplicaSets, IsRollingUpdate, DeploymentComplete, DeploymentProgressing, DeploymentTimedOut, NewRSNewReplicas, IsSaturated, ResolveFenceposts, HasProgressDeadline, HasRevisionHistoryLimit, ReplicaSetsByRevision)
 * @upstream kubernetes/apimachinery pkg/util/intstr/intstr.go (GetScaledValueFromIntOrPercent)
 * @chapter 04-informers
 */

import type {
  Deployment,
  DeploymentCondition,
  DeploymentStatus,
  ReplicaSet,
  ReplicaSetCondition,
} from "../../../api/apps.ts";
import type { ConditionStatus, IntOrString, PodTemplateSpec } from "../../../api/core.ts";
import {
  compareByCreationTimestamp,
  filterActiveReplicaSets,
  semanticEqual,
  sortByCreationTimestamp,
} from "./controller-utils.ts";

// #region constants
export const RevisionAnnotation = "deployment.kubernetes.io/revision";
export const RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history";
export const DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas";
export const MaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";
/** Set by extensions/v1beta1's rollback subresource; never copied to a ReplicaSet. */
export const DeprecatedRollbackTo = "deprecated.deployment.rollback.to";
export const LastAppliedConfigAnnotation = "kubectl.kubernetes.io/last-applied-configuration";
/** The label (and selector term) that ties a ReplicaSet and its pods to one template. */
export const DefaultDeploymentUniqueLabelKey = "pod-template-hash";
/** The revision-history annotation stops growing past this many characters (maxRevHistoryLengthInChars). */
export const maxRevHistoryLengthInChars = 2000;

// Progressing reasons.
export const ReplicaSetUpdatedReason = "ReplicaSetUpdated";
export const FailedRSCreateReason = "ReplicaSetCreateError";
export const NewReplicaSetReason = "NewReplicaSetCreated";
export const FoundNewRSReason = "FoundNewReplicaSet";
export const NewRSAvailableReason = "NewReplicaSetAvailable";
export const TimedOutReason = "ProgressDeadlineExceeded";
export const PausedDeployReason = "DeploymentPaused";
export const ResumedDeployReason = "DeploymentResumed";
// Available reasons.
export const MinimumReplicasAvailable = "MinimumReplicasAvailable";
export const MinimumReplicasUnavailable = "MinimumReplicasUnavailable";

/** A `progressDeadlineSeconds` or `revisionHistoryLimit` of this value means "none" (math.MaxInt32). */
export const MaxInt32 = 2147483647;
// #endregion constants

export const replicasOf = (o: { spec: { replicas?: number } }): number => o.spec.replicas ?? 1;

// #region conditions
/** metav1.Time: RFC 3339, whole seconds. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

export function newDeploymentCondition(
  type: string,
  status: ConditionStatus,
  reason: string,
  message: string,
  nowMs: number,
): DeploymentCondition {
  const t = rfc3339(nowMs);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export function getDeploymentCondition(
  status: DeploymentStatus | undefined,
  type: string,
): DeploymentCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * Puts `condition` in — unless one of its type with the same status and reason is there already
 * (then nothing changes, not even lastUpdateTime). A new reason with the same status keeps the old
 * lastTransitionTime (SetDeploymentCondition).
 */
export function setDeploymentCondition(status: DeploymentStatus, condition: DeploymentCondition): void {
  const current = getDeploymentCondition(status, condition.type);
  if (current && current.status === condition.status && current.reason === condition.reason) return;
  const next = { ...condition };
  if (current && current.status === condition.status) next.lastTransitionTime = current.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== condition.type), next];
}

export function removeDeploymentCondition(status: DeploymentStatus, type: string): void {
  const rest = (status.conditions ?? []).filter((c) => c.type !== type);
  if (rest.length > 0) status.conditions = rest;
  else delete status.conditions;
}

/** A ReplicaSet's ReplicaFailure, as the Deployment shows it (ReplicaSetToDeploymentCondition). */
export function replicaSetToDeploymentCondition(cond: ReplicaSetCondition): DeploymentCondition {
  return {
    type: cond.type,
    status: cond.status,
    lastUpdateTime: cond.lastTransitionTime,
    lastTransitionTime: cond.lastTransitionTime,
    reason: cond.reason,
    message: cond.message,
  };
}
// #endregion conditions

// #region revisions
/** The object's revision annotation as a number; 0 if absent, NaN if not a number (Revision). */
export function revision(obj: { metadata: { annotations?: Record<string, string> } }): number {
  const v = obj.metadata.annotations?.[RevisionAnnotation];
  if (v === undefined) return 0;
  return /^[+-]?\d+$/.test(v) ? Number(v) : Number.NaN;
}

/** The highest revision among the ReplicaSets; unparsable ones are skipped (MaxRevision). */
export function maxRevision(rss: readonly ReplicaSet[]): number {
  let max = 0;
  for (const rs of rss) {
    const v = revision(rs);
    if (!Number.isNaN(v) && v > max) max = v;
  }
  return max;
}

/** Oldest revision first; same revision: older first (ReplicaSetsByRevision). */
export function sortByRevision(rss: readonly ReplicaSet[]): ReplicaSet[] {
  return [...rss].sort((a, b) => {
    const ra = revision(a);
    const rb = revision(b);
    if (ra === rb || Number.isNaN(ra) || Number.isNaN(rb)) return compareByCreationTimestamp(a, b);
    return ra - rb;
  });
}

export function setDeploymentRevision(d: Deployment, rev: string): boolean {
  d.metadata.annotations ??= {};
  if (d.metadata.annotations[RevisionAnnotation] === rev) return false;
  d.metadata.annotations[RevisionAnnotation] = rev;
  return true;
}

const annotationsToSkip = new Set([
  LastAppliedConfigAnnotation,
  RevisionAnnotation,
  RevisionHistoryAnnotation,
  DesiredReplicasAnnotation,
  MaxReplicasAnnotation,
  DeprecatedRollbackTo,
]);

/** Whether kubectl and the controller keep this annotation out of the copy between Deployment and ReplicaSet. */
export function skipCopyAnnotation(key: string): boolean {
  return annotationsToSkip.has(key);
}

/** Copies the Deployment's annotations (change-cause among them) onto the ReplicaSet; true if any changed. */
export function copyDeploymentAnnotationsToReplicaSet(d: Deployment, rs: ReplicaSet): boolean {
  rs.metadata.annotations ??= {};
  let changed = false;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    // The revision is the ReplicaSet's own: the Deployment's copy of it may be stale.
    if (skipCopyAnnotation(k) || rs.metadata.annotations[k] === v) continue;
    rs.metadata.annotations[k] = v;
    changed = true;
  }
  return changed;
}

/**
 * Brings the new ReplicaSet's annotations up to date: the Deployment's annotations, the revision
 * (raised to `newRevision`, never lowered), the revisions it held before when it came back
 * (`revision-history`, a rollback), and — when it is about to be created — the replica
 * annotations. True if anything changed (SetNewReplicaSetAnnotations).
 */
export function setNewReplicaSetAnnotations(
  d: Deployment,
  newRS: ReplicaSet,
  newRevision: string,
  exists: boolean,
  revHistoryLimitInChars = maxRevHistoryLengthInChars,
): boolean {
  let changed = copyDeploymentAnnotationsToReplicaSet(d, newRS);
  newRS.metadata.annotations ??= {};
  const annotations = newRS.metadata.annotations;
  const oldRevision = annotations[RevisionAnnotation];
  const had = oldRevision !== undefined;
  let oldRevisionInt = 0;
  if (had && oldRevision !== "") {
    if (!/^[+-]?\d+$/.test(oldRevision)) return false;
    oldRevisionInt = Number(oldRevision);
  }
  if (!/^[+-]?\d+$/.test(newRevision)) return false;
  const newRevisionInt = Number(newRevision);
  if (oldRevisionInt < newRevisionInt) {
    annotations[RevisionAnnotation] = newRevision;
    changed = true;
  }
  // It had a revision and gets a higher one: a rollback to it. Keep where it has been.
  if (had && oldRevisionInt < newRevisionInt) {
    const history = annotations[RevisionHistoryAnnotation] ?? "";
    if (history === "") {
      annotations[RevisionHistoryAnnotation] = oldRevision;
    } else {
      const old = history.split(",");
      let total = history.length + oldRevision.length + 1;
      let start = 0;
      while (total > revHistoryLimitInChars && start < old.length) {
        total -= old[start].length + 1;
        start++;
      }
      if (total <= revHistoryLimitInChars)
        annotations[RevisionHistoryAnnotation] = [...old.slice(start), oldRevision].join(",");
    }
  }
  if (!exists && setReplicasAnnotations(newRS, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}
// #endregion revisions

// #region replicas-annotations
function intAnnotation(rs: ReplicaSet, key: string): number | undefined {
  const v = rs.metadata.annotations?.[key];
  if (v === undefined || !/^[+-]?\d+$/.test(v)) return undefined;
  return Number(v);
}

/** The Deployment size this ReplicaSet was last sized for (GetDesiredReplicasAnnotation). */
export function getDesiredReplicasAnnotation(rs: ReplicaSet): number | undefined {
  return intAnnotation(rs, DesiredReplicasAnnotation);
}

export function getMaxReplicasAnnotation(rs: ReplicaSet): number | undefined {
  return intAnnotation(rs, MaxReplicasAnnotation);
}

export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  rs.metadata.annotations ??= {};
  const a = rs.metadata.annotations;
  let updated = false;
  if (a[DesiredReplicasAnnotation] !== String(desired)) {
    a[DesiredReplicasAnnotation] = String(desired);
    updated = true;
  }
  if (a[MaxReplicasAnnotation] !== String(max)) {
    a[MaxReplicasAnnotation] = String(max);
    updated = true;
  }
  return updated;
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = rs.metadata.annotations;
  return !a || a[DesiredReplicasAnnotation] !== String(desired) || a[MaxReplicasAnnotation] !== String(max);
}
// #endregion replicas-annotations

// #region fenceposts
/** An int as is, or a percentage of `total` rounded up or down (intstr.GetScaledValueFromIntOrPercent). */
export function getScaledValueFromIntOrPercent(v: IntOrString, total: number, roundUp: boolean): number {
  if (typeof v === "number") return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) throw new Error(`invalid value for IntOrString: invalid type: string is not a percentage`);
  const scaled = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(scaled) : Math.floor(scaled);
}

/**
 * maxSurge (rounded up) and maxUnavailable (rounded down) as pod counts for `desired` replicas.
 * Both 0 after rounding (3 replicas, 10% and 10%) would deadlock the rollout: unavailable becomes 1.
 */
export function resolveFenceposts(
  maxSurge: IntOrString | undefined,
  maxUnavailable: IntOrString | undefined,
  desired: number,
): { surge: number; unavailable: number } {
  const surge = getScaledValueFromIntOrPercent(maxSurge ?? 0, desired, true);
  let unavailable = getScaledValueFromIntOrPercent(maxUnavailable ?? 0, desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec.strategy?.type ?? "RollingUpdate") === "RollingUpdate";
}

/** Pods the rollout may be short of `replicas`; 0 for Recreate or a Deployment scaled to 0 (MaxUnavailable). */
export function maxUnavailable(d: Deployment): number {
  const replicas = replicasOf(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const ru = d.spec.strategy?.rollingUpdate;
  const { unavailable } = resolveFenceposts(ru?.maxSurge ?? "25%", ru?.maxUnavailable ?? "25%", replicas);
  return Math.min(unavailable, replicas);
}

/** Pods the rollout may run above `replicas`; 0 for Recreate (MaxSurge). */
export function maxSurge(d: Deployment): number {
  if (!isRollingUpdate(d)) return 0;
  const ru = d.spec.strategy?.rollingUpdate;
  return resolveFenceposts(ru?.maxSurge ?? "25%", ru?.maxUnavailable ?? "25%", replicasOf(d)).surge;
}
// #endregion fenceposts

// #region proportions
/**
 * How many replicas `rs` gains (or loses, negative) when the Deployment is scaled mid-rollout:
 * its share of the new maximum, by the maximum it was sized for (GetReplicaSetProportion).
 * Never more than what is left to hand out: `toAdd - added`.
 */
export function getReplicaSetProportion(
  rs: ReplicaSet | undefined,
  d: Deployment,
  toAdd: number,
  added: number,
): number {
  if (!rs || replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = getReplicaSetFraction(rs, d);
  const allowed = toAdd - added;
  // Up: at most what is allowed; down: at most what is allowed to remove.
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

function getReplicaSetFraction(rs: ReplicaSet, d: Deployment): number {
  // Scaling to zero: every ReplicaSet gives up all it has.
  if (replicasOf(d) === 0) return -replicasOf(rs);
  const deploymentReplicas = replicasOf(d) + maxSurge(d);
  // Without the annotation, the Deployment's current size is the best guess.
  const annotated = getMaxReplicasAnnotation(rs) ?? d.status?.replicas ?? 0;
  if (annotated === 0) return 0;
  const newSize = (replicasOf(rs) * deploymentReplicas) / annotated;
  // integer.RoundToInt32: half away from zero (newSize is never negative here).
  return Math.round(newSize) - replicasOf(rs);
}

/** The only active ReplicaSet, or the newest when none is active; undefined when several are (FindActiveOrLatest). */
export function findActiveOrLatest(
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
): ReplicaSet | undefined {
  if (!newRS && oldRSs.length === 0) return undefined;
  const newestFirst = sortByCreationTimestamp(oldRSs).reverse();
  const active = filterActiveReplicaSets([...newestFirst, newRS]);
  if (active.length === 0) return newRS ?? newestFirst[0];
  if (active.length === 1) return active[0];
  return undefined;
}
// #endregion proportions

// #region new-and-old
/** Two templates are the same revision if they differ at most in `pod-template-hash` (EqualIgnoreHash). */
export function equalIgnoreHash(t1: PodTemplateSpec, t2: PodTemplateSpec): boolean {
  const strip = (t: PodTemplateSpec): PodTemplateSpec => {
    const c = structuredClone(t);
    if (c.metadata?.labels) delete c.metadata.labels[DefaultDeploymentUniqueLabelKey];
    return c;
  };
  return semanticEqual(strip(t1), strip(t2));
}

/** The ReplicaSet with the Deployment's template; the oldest if there are several (FindNewReplicaSet). */
export function findNewReplicaSet(d: Deployment, rsList: readonly ReplicaSet[]): ReplicaSet | undefined {
  return sortByCreationTimestamp(rsList).find((rs) => equalIgnoreHash(rs.spec.template, d.spec.template));
}

/** Every other ReplicaSet: those with replicas, and all of them (FindOldReplicaSets). */
export function findOldReplicaSets(
  d: Deployment,
  rsList: readonly ReplicaSet[],
): { oldRSs: ReplicaSet[]; allOldRSs: ReplicaSet[] } {
  const newRS = findNewReplicaSet(d, rsList);
  const allOldRSs = rsList.filter((rs) => !newRS || rs.metadata.uid !== newRS.metadata.uid);
  return { oldRSs: allOldRSs.filter((rs) => replicasOf(rs) !== 0), allOldRSs };
}
// #endregion new-and-old

// #region counts
type MaybeRS = ReplicaSet | undefined;
const sum = (rss: readonly MaybeRS[], f: (rs: ReplicaSet) => number) =>
  rss.reduce((n, rs) => n + (rs ? f(rs) : 0), 0);
/** Σ spec.replicas: what the controller asked for. */
export const getReplicaCountForReplicaSets = (rss: readonly MaybeRS[]) => sum(rss, replicasOf);
/** Σ status.replicas: the pods that exist. */
export const getActualReplicaCountForReplicaSets = (rss: readonly MaybeRS[]) =>
  sum(rss, (rs) => rs.status?.replicas ?? 0);
export const getReadyReplicaCountForReplicaSets = (rss: readonly MaybeRS[]) =>
  sum(rss, (rs) => rs.status?.readyReplicas ?? 0);
export const getAvailableReplicaCountForReplicaSets = (rss: readonly MaybeRS[]) =>
  sum(rss, (rs) => rs.status?.availableReplicas ?? 0);
// #endregion counts

// #region new-rs-replicas
/**
 * The size the new ReplicaSet may grow to now: for a rolling update, up to replicas + maxSurge
 * pods in all (counting what every ReplicaSet was asked for), never above replicas; for
 * Recreate, replicas at once — the old ones are gone by then (NewRSNewReplicas).
 */
export function newRSNewReplicas(d: Deployment, allRSs: readonly MaybeRS[], newRS: ReplicaSet): number {
  if (isRollingUpdate(d)) {
    const surge = getScaledValueFromIntOrPercent(
      d.spec.strategy?.rollingUpdate?.maxSurge ?? "25%",
      replicasOf(d),
      true,
    );
    const currentPodCount = getReplicaCountForReplicaSets(allRSs);
    const maxTotalPods = replicasOf(d) + surge;
    if (currentPodCount >= maxTotalPods) return replicasOf(newRS);
    const scaleUpCount = Math.min(maxTotalPods - currentPodCount, replicasOf(d) - replicasOf(newRS));
    return replicasOf(newRS) + scaleUpCount;
  }
  return replicasOf(d);
}

/** The new ReplicaSet holds every replica, knows it, and all are available (IsSaturated). */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = getDesiredReplicasAnnotation(rs);
  if (desired === undefined) return false;
  return (
    replicasOf(rs) === replicasOf(d) &&
    desired === replicasOf(d) &&
    (rs.status?.availableReplicas ?? 0) === replicasOf(d)
  );
}
// #endregion new-rs-replicas

// #region progress-checks
/** All replicas updated and available, no old pods, and the status is of this generation (DeploymentComplete). */
export function deploymentComplete(d: Deployment, s: DeploymentStatus): boolean {
  const r = replicasOf(d);
  return (
    (s.updatedReplicas ?? 0) === r &&
    (s.replicas ?? 0) === r &&
    (s.availableReplicas ?? 0) === r &&
    (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
}

/** Something moved since the last status: more updated, fewer old, more ready or available (DeploymentProgressing). */
export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const o = d.status ?? {};
  const oldOld = (o.replicas ?? 0) - (o.updatedReplicas ?? 0);
  const newOld = (s.replicas ?? 0) - (s.updatedReplicas ?? 0);
  return (
    (s.updatedReplicas ?? 0) > (o.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (s.readyReplicas ?? 0) > (o.readyReplicas ?? 0) ||
    (s.availableReplicas ?? 0) > (o.availableReplicas ?? 0)
  );
}

export function hasProgressDeadline(d: Deployment): boolean {
  const p = d.spec.progressDeadlineSeconds;
  return p !== undefined && p !== null && p !== MaxInt32;
}

export function hasRevisionHistoryLimit(d: Deployment): boolean {
  const l = d.spec.revisionHistoryLimit;
  return l !== undefined && l !== null && l !== MaxInt32;
}

/**
 * No progress for progressDeadlineSeconds since the Progressing condition was last updated — or
 * already reported as timed out. A completed rollout never times out (DeploymentTimedOut).
 */
export function deploymentTimedOut(d: Deployment, s: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const cond = getDeploymentCondition(s, "Progressing");
  if (!cond) return false;
  if (cond.reason === NewRSAvailableReason) return false;
  if (cond.reason === TimedOutReason) return true;
  const from = Date.parse(cond.lastUpdateTime ?? "");
  if (Number.isNaN(from)) return false;
  return from + (d.spec.progressDeadlineSeconds ?? 0) * 1000 < nowMs;
}
// #endregion progress-checks
