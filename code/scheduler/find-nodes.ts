/**
 * schedulePod — the placement half of the scheduling cycle: refresh the snapshot, find nodes
 * that pass every Filter (stopping once enough are found), score them, pick the best.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/schedule_one.go (schedulePod, findNodesThatFitPod, evaluateNominatedNode, findNodesThatPassFilters, numFeasibleNodesToFind, prioritizeNodes, selectHost, ScheduleResult, ErrNoNodesAvailable, minFeasibleNodesToFind, minFeasibleNodesPercentageToFind, numberOfHighestScoredNodesToReport)
 * @chapter 05-scheduler
 *
 * Solves: in a 5,000-node cluster, filtering and scoring every node for every pod costs more
 * than the answer is worth — any of the first few hundred feasible nodes is nearly as good.
 * So the search stops at `numFeasibleNodesToFind`, and starts where the last one stopped so
 * every node gets its turn.
 *
 * Invariants:
 * - numFeasibleNodesToFind: all nodes below 100; else nodes × p / 100 with p the profile's (or
 *   global) percentage, or adaptively 50 − nodes/125 (at least 5); never fewer than 100.
 * - with no Score plugin only one feasible node is looked for (nothing to compare).
 * - `nextStartNodeIndex` advances by the nodes processed (feasible + rejected), modulo all nodes.
 * - a node rejected by Filter has its Status in the diagnosis; a node never reached has none.
 * - selectHost: highest total score; ties broken uniformly at random (reservoir sampling) with
 *   the injected random source, so a seeded run always picks the same node.
 */
import type { Pod } from "../api/core.ts";
import type { Snapshot } from "./backend/cache/snapshot.ts";
import type { CycleState } from "./framework/cycle-state.ts";
import { Diagnosis, FitError } from "./framework/diagnosis.ts";
import type { NodePluginScores } from "./framework/interface.ts";
import type { NodeInfo } from "./framework/node-info.ts";
import type { Framework } from "./framework/runtime/framework.ts";
import { asError, Code, isRejected, isSuccess, newStatus } from "./framework/status.ts";

export const minFeasibleNodesToFind = 100;
export const minFeasibleNodesPercentageToFind = 5;
export const numberOfHighestScoredNodesToReport = 3;

export class NoNodesAvailableError extends Error {
  constructor() {
    super("no nodes available to schedule pods");
  }
}

export interface ScheduleResult {
  suggestedHost: string;
  evaluatedNodes: number;
  feasibleNodes: number;
}

/** The scheduler state placement reads and moves: where the next search starts. */
export interface SearchState {
  nextStartNodeIndex: number;
  /** The global percentageOfNodesToScore (0: adaptive); a profile's own value wins. */
  percentageOfNodesToScore: number;
  /** A source of uniform numbers in [0, 1) — seeded in tests. */
  rand: () => number;
}

// #region num-feasible
export function numFeasibleNodesToFind(percentage: number, numAllNodes: number): number {
  if (numAllNodes < minFeasibleNodesToFind) return numAllNodes;
  let p = percentage;
  if (p === 0) {
    p = 50 - Math.trunc(numAllNodes / 125);
    if (p < minFeasibleNodesPercentageToFind) p = minFeasibleNodesPercentageToFind;
  }
  const n = Math.trunc((numAllNodes * p) / 100);
  return Math.max(n, minFeasibleNodesToFind);
}
// #endregion num-feasible

// #region schedule-pod
export function schedulePod(
  search: SearchState,
  fwk: Framework,
  snapshot: Snapshot,
  state: CycleState,
  pod: Pod,
): ScheduleResult | Error {
  if (snapshot.numNodes() === 0) return new NoNodesAvailableError();
  const found = findNodesThatFitPod(search, fwk, snapshot, state, pod);
  if (found instanceof Error) return found;
  const [feasible, diagnosis] = found;
  if (feasible.length === 0) return new FitError(pod, snapshot.numNodes(), diagnosis);
  // One node: nothing to compare, skip scoring.
  if (feasible.length === 1) {
    return {
      suggestedHost: feasible[0].nodeName(),
      evaluatedNodes: 1 + diagnosis.nodeToStatus.len(),
      feasibleNodes: 1,
    };
  }
  const scores = prioritizeNodes(fwk, state, pod, feasible);
  if (scores instanceof Error) return scores;
  const [host] = selectHost(scores, numberOfHighestScoredNodesToReport, search.rand);
  return {
    suggestedHost: host,
    evaluatedNodes: feasible.length + diagnosis.nodeToStatus.len(),
    feasibleNodes: feasible.length,
  };
}
// #endregion schedule-pod

// #region find-nodes
export function findNodesThatFitPod(
  search: SearchState,
  fwk: Framework,
  snapshot: Snapshot,
  state: CycleState,
  pod: Pod,
): [NodeInfo[], Diagnosis] | Error {
  const diagnosis = new Diagnosis();
  const allNodes = snapshot.list();
  const [preRes, s, unscheduledPlugins] = fwk.runPreFilterPlugins(state, pod);
  diagnosis.unschedulablePlugins = unscheduledPlugins;
  if (!isSuccess(s)) {
    if (!isRejected(s)) return asError(s)!;
    // Every node gets the same status, so preemption sees PreFilter's verdict everywhere.
    diagnosis.nodeToStatus.setAbsentNodesStatus(s!);
    diagnosis.preFilterMsg = s!.message();
    diagnosis.addPluginStatus(s);
    return [[], diagnosis];
  }
  // A nominated node (set by preemption) is likely the only fit: try it first.
  const nominated = pod.status?.nominatedNodeName;
  if (nominated) {
    const ni = snapshot.get(nominated);
    if (!(ni instanceof Error)) {
      const r = findNodesThatPassFilters(search, fwk, state, pod, diagnosis, [ni]);
      if (!(r instanceof Error) && r.length > 0) return [r, diagnosis];
    }
  }
  let nodes = allNodes;
  if (preRes?.nodeNames) {
    nodes = [];
    for (const name of preRes.nodeNames) {
      const ni = snapshot.get(name);
      if (!(ni instanceof Error)) nodes.push(ni);
    }
    diagnosis.nodeToStatus.setAbsentNodesStatus(
      newStatus(
        Code.UnschedulableAndUnresolvable,
        `node(s) didn't satisfy plugin(s) [${[...unscheduledPlugins].sort().join(" ")}]`,
      ),
    );
  }
  const feasible = findNodesThatPassFilters(search, fwk, state, pod, diagnosis, nodes);
  // Always move the start, even after an error, so every node gets a chance.
  const processed = (feasible instanceof Error ? 0 : feasible.length) + diagnosis.nodeToStatus.len();
  if (allNodes.length > 0)
    search.nextStartNodeIndex = (search.nextStartNodeIndex + processed) % allNodes.length;
  if (feasible instanceof Error) return feasible;
  return [feasible, diagnosis];
}

/** findNodesThatPassFilters: walk from nextStartNodeIndex, stop at numNodesToFind feasible. */
export function findNodesThatPassFilters(
  search: SearchState,
  fwk: Framework,
  state: CycleState,
  pod: Pod,
  diagnosis: Diagnosis,
  nodes: NodeInfo[],
): NodeInfo[] | Error {
  const numAllNodes = nodes.length;
  let numNodesToFind = numFeasibleNodesToFind(
    fwk.percentageOfNodesToScore || search.percentageOfNodesToScore,
    numAllNodes,
  );
  if (!fwk.hasScorePlugins()) numNodesToFind = Math.min(1, numAllNodes);
  const feasible: NodeInfo[] = [];
  if (!fwk.hasFilterPlugins()) {
    for (let i = 0; i < numNodesToFind; i++)
      feasible.push(nodes[(search.nextStartNodeIndex + i) % numAllNodes]);
    return feasible;
  }
  // Upstream checks nodes in parallel and cancels once enough are found; sequentially, the
  // same rule is "stop at the numNodesToFind-th feasible node".
  for (let i = 0; i < numAllNodes && feasible.length < numNodesToFind; i++) {
    const ni = nodes[(search.nextStartNodeIndex + i) % numAllNodes];
    const s = fwk.runFilterPluginsWithNominatedPods(state, pod, ni);
    // explain (schedex): every plugin's verdict on this node, from the status it ended with.
    if (state.explain) state.explain.recordFilter(state.skipFilterPlugins, ni.nodeName(), s);
    if (s?.code === Code.Error) return asError(s)!;
    if (isSuccess(s)) feasible.push(ni);
    else {
      diagnosis.nodeToStatus.set(ni.nodeName(), s!);
      diagnosis.addPluginStatus(s);
    }
  }
  return feasible;
}
// #endregion find-nodes

// #region prioritize
/** prioritizeNodes: PreScore, Score; with no Score plugin every node scores 1. */
export function prioritizeNodes(
  fwk: Framework,
  state: CycleState,
  pod: Pod,
  nodes: NodeInfo[],
): NodePluginScores[] | Error {
  if (!fwk.hasScorePlugins()) return nodes.map((n) => ({ name: n.nodeName(), scores: [], totalScore: 1 }));
  const pre = fwk.runPreScorePlugins(state, pod, nodes);
  if (!isSuccess(pre)) return asError(pre)!;
  const [scores, s] = fwk.runScorePlugins(state, pod, nodes);
  if (!isSuccess(s)) return asError(s)!;
  return scores;
}

/**
 * selectHost: the highest total; among equal totals each is chosen with equal probability
 * (reservoir sampling: the k-th tie replaces the pick with probability 1/k). Also returns up to
 * `count` top entries, the chosen one first, for the explain output.
 */
export function selectHost(
  list: NodePluginScores[],
  count: number,
  rand: () => number,
): [string, NodePluginScores[]] {
  if (list.length === 0) throw new Error("empty priorityList");
  const sorted = [...list].sort((a, b) => b.totalScore - a.totalScore);
  const top = sorted[0].totalScore;
  let selected = 0;
  let ties = 1;
  for (let i = 1; i < sorted.length && sorted[i].totalScore === top; i++) {
    ties++;
    if (Math.floor(rand() * ties) === 0) selected = i;
  }
  if (selected !== 0) [sorted[0], sorted[selected]] = [sorted[selected], sorted[0]];
  return [sorted[0].name, sorted.slice(0, count)];
}
// #endregion prioritize
