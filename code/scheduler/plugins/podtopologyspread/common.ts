/**
 * Spread constraints as the scheduler uses them — a pod's `topologySpreadConstraints` (or the
 * default ones) with the selector parsed, `matchLabelKeys` merged in and the unset policies
 * defaulted; and the small questions both Filter and Score ask of them.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/common.go (topologySpreadConstraint, matchNodeInclusionPolicies, buildDefaultConstraints, nodeLabelsMatchSpreadConstraints, filterTopologySpreadConstraints, mergeLabelSetWithSelector, countPodsMatchSelector)
 * @chapter 05-scheduler
 *
 * Solves: Filter (DoNotSchedule) and Score (ScheduleAnyway) read the same constraint list,
 * each taking its half; parsing and defaulting it once per cycle keeps the two in agreement.
 *
 * Invariants:
 * - a parsed constraint has minDomains ≥ 1 (unset means 1), nodeAffinityPolicy Honor and
 *   nodeTaintsPolicy Ignore unless the pod says otherwise.
 * - `matchLabelKeys` adds `key=value` for each key the incoming pod has (keys it lacks are
 *   skipped); a constraint with no labelSelector then matches by those labels alone.
 * - default constraints apply only to a pod with no constraints of its own, and only when the
 *   pod's Services / controller give a non-empty selector.
 * - counting skips terminating pods and pods of other namespaces.
 */
import type {
  Node,
  Pod,
  TopologySpreadConstraint,
  UnsatisfiableConstraintAction,
} from "../../../api/core.ts";
import {
  type Labels,
  labelSelectorAsSelector,
  type Selector,
  selectorFromSet,
  selectorMatches,
  sortByKey,
} from "../../../api/labels.ts";
import type { RequiredNodeAffinity } from "../../../api/node-affinity.ts";
import type { PodInfo } from "../../framework/types.ts";
import { defaultSelector, type SpreadListers } from "../helper/spread.ts";
import { findMatchingUntoleratedTaint } from "../helper/taints.ts";

// #region constraint
/** topologySpreadConstraint: v1.TopologySpreadConstraint with its selector parsed and defaults applied. */
export interface SpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  selector: Selector;
  minDomains: number;
  nodeAffinityPolicy: "Honor" | "Ignore";
  nodeTaintsPolicy: "Honor" | "Ignore";
}

/**
 * filterTopologySpreadConstraints: the constraints with `action`, parsed. An invalid selector
 * is an error for the whole pod (the API server should have rejected it).
 */
export function filterTopologySpreadConstraints(
  constraints: readonly TopologySpreadConstraint[],
  podLabels: Labels,
  action: UnsatisfiableConstraintAction,
): SpreadConstraint[] | Error {
  const result: SpreadConstraint[] = [];
  for (const c of constraints) {
    if (c.whenUnsatisfiable !== action) continue;
    const parsed = labelSelectorAsSelector(c.labelSelector);
    if (!parsed.ok) return parsed.error;
    let selector = parsed.value;
    // matchLabelKeys: "pods like me" — typically pod-template-hash, so a rolling update's new
    // ReplicaSet spreads on its own instead of counting the old one's pods.
    const matchLabels: Record<string, string> = {};
    for (const key of c.matchLabelKeys ?? []) if (key in podLabels) matchLabels[key] = podLabels[key];
    if (Object.keys(matchLabels).length > 0) selector = mergeLabelSetWithSelector(matchLabels, selector);
    result.push({
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      selector,
      minDomains: c.minDomains ?? 1,
      nodeAffinityPolicy: c.nodeAffinityPolicy ?? "Honor",
      nodeTaintsPolicy: c.nodeTaintsPolicy ?? "Ignore",
    });
  }
  return result;
}

/** The label set's requirements plus the selector's; a selects-nothing selector adds none. */
export function mergeLabelSetWithSelector(matchLabels: Labels, s: Selector): Selector {
  const merged = selectorFromSet(matchLabels);
  if (s.selectsNothing) return merged;
  return { requirements: sortByKey([...merged.requirements, ...s.requirements]) };
}
// #endregion constraint

// #region default-constraints
/**
 * buildDefaultConstraints: the configured default constraints with `action`, each given the
 * selector deduced from the pod's Services and controller. No such selector: no constraints.
 */
export function buildDefaultConstraints(
  defaults: readonly TopologySpreadConstraint[],
  pod: Pod,
  action: UnsatisfiableConstraintAction,
  listers: SpreadListers | undefined,
): SpreadConstraint[] | Error {
  const constraints = filterTopologySpreadConstraints(defaults, pod.metadata.labels ?? {}, action);
  if (constraints instanceof Error || constraints.length === 0) return constraints;
  const selector = defaultSelector(pod, listers);
  if (selector.requirements.length === 0) return [];
  return constraints.map((c) => ({ ...c, selector }));
}
// #endregion default-constraints

// #region node-inclusion
/**
 * matchNodeInclusionPolicies: does this node count as a domain of this constraint? Honor on
 * nodeAffinityPolicy: only nodes the pod's nodeSelector / required affinity allow; Honor on
 * nodeTaintsPolicy: only nodes whose NoSchedule / NoExecute taints the pod tolerates.
 */
export function matchNodeInclusionPolicies(
  c: SpreadConstraint,
  pod: Pod,
  node: Node,
  required: RequiredNodeAffinity,
): boolean {
  if (c.nodeAffinityPolicy === "Honor" && !required.match(node)[0]) return false;
  if (c.nodeTaintsPolicy === "Honor") {
    const untolerated = findMatchingUntoleratedTaint(
      node.spec?.taints,
      pod.spec.tolerations,
      (t) => t.effect === "NoSchedule" || t.effect === "NoExecute",
    );
    if (untolerated) return false;
  }
  return true;
}

/** nodeLabelsMatchSpreadConstraints: the node has every constraint's topology key. */
export function nodeLabelsMatchSpreadConstraints(
  nodeLabels: Labels | undefined,
  constraints: readonly SpreadConstraint[],
): boolean {
  if (nodeLabels === undefined) return constraints.length === 0;
  for (const c of constraints) if (!(c.topologyKey in nodeLabels)) return false;
  return true;
}

/** podLabelsMatchSpreadConstraints: some constraint's selector matches these labels. */
export function podLabelsMatchSpreadConstraints(
  constraints: readonly SpreadConstraint[],
  podLabels: Labels | undefined,
): boolean {
  return constraints.some((c) => selectorMatches(c.selector, podLabels ?? {}));
}
// #endregion node-inclusion

// #region count
/** countPodsMatchSelector: the node's pods in `ns` that match, terminating ones left out. */
export function countPodsMatchSelector(podInfos: readonly PodInfo[], selector: Selector, ns: string): number {
  let n = 0;
  for (const pi of podInfos) {
    const p = pi.pod;
    // A terminating pod is on its way out (#87621): counting it would block its replacement.
    if (p.metadata.deletionTimestamp || (p.metadata.namespace ?? "") !== ns) continue;
    if (selectorMatches(selector, p.metadata.labels ?? {})) n++;
  }
  return n;
}
// #endregion count
