/**
 * InterPodAffinity scoring — PreScore sums weights per topology pair in both directions (the
 * incoming pod's preferred terms toward existing pods, and existing pods' terms toward it),
 * Score reads a node's pairs, NormalizeScore stretches the results to 0–100 min to max.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/scoring.go (scoreMap, preScoreState, processTerm, processTerms, processExistingPod, PreScore, Score, NormalizeScore)
 * @chapter 05-scheduler
 *
 * Solves: preferences are soft, so they must be comparable across nodes: a node in a zone
 * with three preferred pods beats one with one, and a zone with a pod that prefers to avoid
 * the newcomer loses. As for Filter, the pods are scanned once (PreScore) into
 * `topologyScore[key][value]`, and each node's Score is a few lookups.
 *
 * Invariants:
 * - for every existing pod E on a node N with labels, and for every pair (k, N[k]):
 *   + weight of each preferred affinity term of the incoming pod that E matches,
 *   − weight of each preferred anti-affinity term of the incoming pod that E matches,
 *   + hardPodAffinityWeight for each REQUIRED affinity term of E the incoming pod matches,
 *   + weight of each preferred affinity term of E the incoming pod matches,
 *   − weight of each preferred anti-affinity term of E the incoming pod matches.
 *   (E's required anti-affinity is not scored: Filter already enforces it.)
 * - raw scores may be negative; NormalizeScore maps min → 0 and max → 100 linearly
 *   (truncated), all equal → 0; with no pair at all, it leaves the scores (all 0) alone.
 * - without preferred terms of its own, the incoming pod only needs the nodes that have pods
 *   with affinity (havePodsWithAffinityList), and on them only those pods.
 */
import type { Node, Pod } from "../../../api/core.ts";
import type { Labels } from "../../../api/labels.ts";
import type { CycleState, StateData } from "../../framework/cycle-state.ts";
import { NotFoundError } from "../../framework/cycle-state.ts";
import { MaxNodeScore, type NodeScore } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { asStatus, Code, newStatus, type Status } from "../../framework/status.ts";
import { type AffinityTerm, PodInfo, type WeightedAffinityTerm } from "../../framework/types.ts";
import type { InterPodAffinityContext } from "./args.ts";
import { getNamespaceLabelsSnapshot, mergeAll, termMatches } from "./terms.ts";

// "PreScore" + Name.
const preScoreStateKey = "PreScoreInterPodAffinity";

// #region score-map
/** topologyKey → topologyValue → summed weight. */
export type ScoreMap = Map<string, Map<string, number>>;

function processTerm(
  m: ScoreMap,
  term: AffinityTerm,
  weight: number,
  pod: Pod,
  nsLabels: Labels | undefined,
  node: Node,
  multiplier: 1 | -1,
): void {
  if (!termMatches(term, pod, nsLabels)) return;
  const tv = node.metadata.labels?.[term.topologyKey];
  if (tv === undefined) return;
  let values = m.get(term.topologyKey);
  if (!values) {
    values = new Map();
    m.set(term.topologyKey, values);
  }
  values.set(tv, (values.get(tv) ?? 0) + weight * multiplier);
}

function processTerms(
  m: ScoreMap,
  terms: readonly WeightedAffinityTerm[],
  pod: Pod,
  nsLabels: Labels | undefined,
  node: Node,
  multiplier: 1 | -1,
): void {
  for (const t of terms) processTerm(m, t, t.weight, pod, nsLabels, node, multiplier);
}
// #endregion score-map

class PreScoreState implements StateData {
  readonly topologyScore: ScoreMap = new Map();
  constructor(
    readonly pod: Pod,
    /** The incoming pod's preferred terms, namespaceSelectors unrolled. */
    readonly preferredAffinityTerms: WeightedAffinityTerm[],
    readonly preferredAntiAffinityTerms: WeightedAffinityTerm[],
    readonly namespaceLabels: Labels | undefined,
  ) {}
  /** Read-only after PreScore: no copy needed. */
  clone(): StateData {
    return this;
  }
}

/** A node with no labels is in no topology domain; checked without building a key list. */
function hasLabels(node: Node): boolean {
  for (const _ in node.metadata.labels ?? {}) return true;
  return false;
}

// #region process-existing-pod
/** Both directions between one existing pod and the incoming pod, on the existing pod's node. */
function processExistingPod(
  pl: InterPodAffinityContext,
  s: PreScoreState,
  existing: PodInfo,
  node: Node,
  topoScore: ScoreMap,
): void {
  if (!hasLabels(node)) return;
  // The incoming pod's preferences toward the existing pod (its terms are unrolled: no labels).
  processTerms(topoScore, s.preferredAffinityTerms, existing.pod, undefined, node, 1);
  processTerms(topoScore, s.preferredAntiAffinityTerms, existing.pod, undefined, node, -1);
  // The existing pod's wishes toward the incoming pod, against the incoming pod's namespace labels.
  const hard = pl.args.hardPodAffinityWeight;
  if (hard > 0) {
    // A pod that REQUIRES pods like the newcomer nearby: honour it softly, with a fixed weight.
    for (const t of existing.requiredAffinityTerms)
      processTerm(topoScore, t, hard, s.pod, s.namespaceLabels, node, 1);
  }
  processTerms(topoScore, existing.preferredAffinityTerms, s.pod, s.namespaceLabels, node, 1);
  processTerms(topoScore, existing.preferredAntiAffinityTerms, s.pod, s.namespaceLabels, node, -1);
}
// #endregion process-existing-pod

// #region prescore
export function preScore(
  pl: InterPodAffinityContext,
  cycleState: CycleState,
  pod: Pod,
  nodes: NodeInfo[],
): Status | undefined {
  if (nodes.length === 0) return newStatus(Code.Skip);
  const a = pod.spec.affinity;
  const hasConstraints =
    (a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0 ||
    (a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0;
  if (pl.args.ignorePreferredTermsOfExistingPods && !hasConstraints) return newStatus(Code.Skip);

  const snapshot = pl.handle.snapshotSharedLister();
  // All nodes (the snapshot's, not only the feasible ones: a pod on an infeasible node still
  // scores its zone) when the pod has preferences; otherwise only nodes with affinity pods.
  const allNodes = hasConstraints ? snapshot.list() : snapshot.havePodsWithAffinityList();
  // Nothing to visit: the Skip below, without parsing the pod (the common case).
  if (allNodes.length === 0) return newStatus(Code.Skip);
  const podInfo = new PodInfo(pod);
  if (podInfo.parseError) return asStatus(new Error(`failed to parse pod: ${podInfo.parseError.message}`));
  const nsLister = pl.nsLister();
  const s = new PreScoreState(
    pod,
    mergeAll(podInfo.preferredAffinityTerms, nsLister),
    mergeAll(podInfo.preferredAntiAffinityTerms, nsLister),
    getNamespaceLabelsSnapshot(pod.metadata.namespace ?? "", nsLister),
  );
  for (const ni of allNodes) {
    const node = ni.node();
    if (!node) continue;
    const podsToProcess = hasConstraints ? ni.pods : ni.podsWithAffinity;
    for (const existing of podsToProcess) processExistingPod(pl, s, existing, node, s.topologyScore);
  }
  // No pair got a weight: every node would score the same, so Score says nothing.
  if (s.topologyScore.size === 0) return newStatus(Code.Skip);
  cycleState.write(preScoreStateKey, s);
  return undefined;
}
// #endregion prescore

function getPreScoreState(cycleState: CycleState): PreScoreState | Error {
  const c = cycleState.read(preScoreStateKey);
  if (c instanceof NotFoundError)
    return new Error(`error reading "${preScoreStateKey}" from cycleState: ${c.message}`);
  if (!(c instanceof PreScoreState))
    return new Error(`${String(c)}  convert to interpodaffinity.preScoreState error`);
  return c;
}

// #region score
/** Score: the sum of the node's pairs' weights — raw, possibly negative. */
export function score(cycleState: CycleState, nodeInfo: NodeInfo): [number, Status | undefined] {
  const s = getPreScoreState(cycleState);
  if (s instanceof Error) return [0, asStatus(s)];
  const labels = nodeInfo.node()?.metadata.labels ?? {};
  let total = 0;
  for (const [tk, values] of s.topologyScore) {
    const tv = labels[tk];
    if (tv !== undefined) total += values.get(tv) ?? 0;
  }
  return [total, undefined];
}

/**
 * NormalizeScore: min-max, not max-only (as the resource scores are): raw scores can be
 * negative, and the least-liked node must get 0 whatever its sign.
 */
export function normalizeScore(cycleState: CycleState, scores: NodeScore[]): Status | undefined {
  const s = getPreScoreState(cycleState);
  if (s instanceof Error) return asStatus(s);
  if (s.topologyScore.size === 0) return undefined;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const ns of scores) {
    if (ns.score > max) max = ns.score;
    if (ns.score < min) min = ns.score;
  }
  const diff = max - min;
  for (const ns of scores) {
    // Upstream's float order, 100 × ((s − min) / diff), then int64(): truncation. (100 × 29) / 100
    // is 29 but 100 × (29 / 100) is 28.999…, so the order decides ties at the boundary.
    ns.score = diff > 0 ? Math.trunc(MaxNodeScore * ((ns.score - min) / diff)) : 0;
  }
  return undefined;
}
// #endregion score
