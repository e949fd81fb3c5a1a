/**
 * PodTopologySpread's soft half (whenUnsatisfiable: ScheduleAnyway) — PreScore counts the
 * matching pods per domain, Score gives each node the weighted count of its domains (more
 * pods, higher raw score), NormalizeScore inverts that so the emptiest domain scores 100.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/scoring.go (preScoreState, initPreScoreState, PreScore, Score, NormalizeScore, topologyNormalizingWeight, scoreForCount, invalidScore)
 * @chapter 05-scheduler
 *
 * Solves: a soft constraint must never reject a node, only make crowded domains less
 * attractive. A raw "pods in my domain" count is comparable across nodes of one constraint;
 * weighting it by log(number of domains + 2) keeps a 3-zone constraint from being drowned
 * by a 500-host one when both apply.
 *
 * Invariants:
 * - raw score(node) = round(Σ over constraints whose key the node has of
 *   count(domain) × log(size + 2) + (maxSkew − 1)); size = domains among the feasible nodes
 *   (hostname: the number of feasible, non-ignored nodes).
 * - domains are only those of feasible nodes; counts include pods on every node of such a
 *   domain (all nodes, not just feasible ones) that pass the inclusion policies.
 * - a node missing a topology key is "ignored" (score 0 after normalizing) — except under
 *   the system defaults, where a node without a zone label still spreads by hostname.
 * - normalized = 100 × (max + min − raw) / max (integer division), or 100 when max is 0.
 */
import type { Pod } from "../../../api/core.ts";
import { getRequiredNodeAffinity } from "../../../api/node-affinity.ts";
import type { StateData } from "../../framework/cycle-state.ts";
import { MaxNodeScore, type NodeScore } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import {
  countPodsMatchSelector,
  matchNodeInclusionPolicies,
  nodeLabelsMatchSpreadConstraints,
  type SpreadConstraint,
} from "./common.ts";

export const LabelHostname = "kubernetes.io/hostname";
const invalidScore = -1;

// #region prescore-state
export class PreScoreState implements StateData {
  constructor(
    readonly constraints: SpreadConstraint[],
    /** Nodes missing some constraint's topology key: not scored. */
    readonly ignoredNodes: Set<string>,
    /** Per constraint: domain value → matching pods (hostname counts are taken in Score). */
    readonly topologyValueToPodCounts: Map<string, number>[],
    readonly topologyNormalizingWeight: number[],
  ) {}

  /** Score only reads it: no copy needed. */
  clone(): PreScoreState {
    return this;
  }
}

/** topologyNormalizingWeight: log(size + 2) — in [1.09, 8.52] for 1 to 5000 domains. */
export function topologyNormalizingWeight(size: number): number {
  return Math.log(size + 2);
}

/** scoreForCount: maxSkew − 1 is added so that a larger tolerance waters down small differences. */
export function scoreForCount(cnt: number, maxSkew: number, tpWeight: number): number {
  return cnt * tpWeight + (maxSkew - 1);
}
// #endregion prescore-state

// #region prescore
/**
 * PreScore (after initPreScoreState): the domains of the feasible nodes, then the matching
 * pods in those domains over all nodes. Hostname domains are one node each: counted in Score.
 */
export function calPreScoreState(
  constraints: SpreadConstraint[],
  pod: Pod,
  filteredNodes: readonly NodeInfo[],
  allNodes: readonly NodeInfo[],
  requireAllTopologies: boolean,
): PreScoreState {
  const ignored = new Set<string>();
  const counts = constraints.map(() => new Map<string, number>());
  const topoSize = constraints.map(() => 0);
  for (const ni of filteredNodes) {
    const labels = ni.node()?.metadata.labels ?? {};
    if (requireAllTopologies && !nodeLabelsMatchSpreadConstraints(labels, constraints)) {
      ignored.add(ni.nodeName());
      continue;
    }
    constraints.forEach((c, i) => {
      if (c.topologyKey === LabelHostname) return;
      // A missing label reads as "" (Go's map lookup): under the system defaults a zone-less
      // node is one more domain for sizing, but Score skips the key it lacks.
      const value = labels[c.topologyKey] ?? "";
      if (!counts[i].has(value)) {
        counts[i].set(value, 0);
        topoSize[i]++;
      }
    });
  }
  const weights = constraints.map((c, i) =>
    topologyNormalizingWeight(
      c.topologyKey === LabelHostname ? filteredNodes.length - ignored.size : topoSize[i],
    ),
  );

  const required = getRequiredNodeAffinity(pod);
  const ns = pod.metadata.namespace ?? "";
  for (const ni of allNodes) {
    const node = ni.node();
    if (!node) continue;
    if (requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.metadata.labels, constraints))
      continue;
    constraints.forEach((c, i) => {
      if (!matchNodeInclusionPolicies(c, pod, node, required)) return;
      const value = node.metadata.labels?.[c.topologyKey] ?? "";
      // Only domains some feasible node is in; hostname has none here (Score counts it).
      const cur = counts[i].get(value);
      if (cur === undefined) return;
      counts[i].set(value, cur + countPodsMatchSelector(ni.pods, c.selector, ns));
    });
  }
  return new PreScoreState(constraints, ignored, counts, weights);
}
// #endregion prescore

// #region score
/** Score: the raw (not yet inverted) score — more matching pods in the node's domains, higher. */
export function scoreNode(s: PreScoreState, pod: Pod, nodeInfo: NodeInfo): number {
  if (s.ignoredNodes.has(nodeInfo.nodeName())) return 0;
  const labels = nodeInfo.node()?.metadata.labels ?? {};
  let score = 0;
  s.constraints.forEach((c, i) => {
    const tpVal = labels[c.topologyKey];
    if (tpVal === undefined) return;
    const cnt =
      c.topologyKey === LabelHostname
        ? countPodsMatchSelector(nodeInfo.pods, c.selector, pod.metadata.namespace ?? "")
        : (s.topologyValueToPodCounts[i].get(tpVal) ?? 0);
    score += scoreForCount(cnt, c.maxSkew, s.topologyNormalizingWeight[i]);
  });
  return Math.round(score);
}

/** NormalizeScore: invert between the min and max raw score; ignored nodes get 0. */
export function normalizeScores(s: PreScoreState, scores: NodeScore[]): void {
  let min = Number.MAX_SAFE_INTEGER;
  let max = 0;
  for (const ns of scores) {
    if (s.ignoredNodes.has(ns.name)) {
      ns.score = invalidScore;
      continue;
    }
    min = Math.min(min, ns.score);
    max = Math.max(max, ns.score);
  }
  for (const ns of scores) {
    if (ns.score === invalidScore) ns.score = 0;
    else if (max === 0) ns.score = MaxNodeScore;
    else ns.score = Math.trunc((MaxNodeScore * (max + min - ns.score)) / max);
  }
}
// #endregion score
