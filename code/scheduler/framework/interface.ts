/**
 * Framework interfaces — the plugin contracts: a plugin's name, the queue-facing points
 * (PreEnqueue, QueueSort, EnqueueExtensions, the nominator) and the scheduling and binding
 * cycle's points (PreFilter, Filter, PostFilter, PreScore, Score + NormalizeScore, Reserve /
 * Unreserve, Permit, PreBind, Bind, PostBind).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/interface.go (Plugin, PreEnqueuePlugin, QueueSortPlugin, LessFunc, EnqueueExtensions, PodNominator, NominatingInfo, NominatingMode, PreFilterPlugin, PreFilterExtensions, PreFilterResult, FilterPlugin, PostFilterPlugin, PostFilterResult, PreScorePlugin, ScorePlugin, ScoreExtensions, ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin, PostBindPlugin, NodeScore, NodePluginScores, MaxNodeScore)
 * @chapter 05-scheduler
 *
 * Solves: the queue runs plugin code (gates, ordering, hints) but must not depend on the
 * framework runtime that builds profiles — so it sees plugins only through these interfaces;
 * the runtime, in turn, knows a plugin only by which of them it implements.
 *
 * Invariants:
 * - every hook returns a Status where `undefined` means Success (Go's nil): the happy path
 *   allocates nothing per node.
 * - a PreEnqueue plugin returns `undefined` (Success) to let a pod into activeQ; anything
 *   else keeps it in unschedulablePods as gated until the pod itself is updated.
 * - `LessFunc(a, b)` is a strict order: true when `a` must be scheduled before `b`.
 * - a Score plugin's scores, after its NormalizeScore, lie in [MinNodeScore, MaxNodeScore]
 *   (0–100); the runtime rejects anything else as an Error, then multiplies by the weight.
 */
import type { Pod } from "../../api/core.ts";
import type { CycleState } from "./cycle-state.ts";
import type { NodeToStatus } from "./diagnosis.ts";
import type { ClusterEventWithHint } from "./events.ts";
import type { NodeInfo } from "./node-info.ts";
import type { Status } from "./status.ts";
import type { PodInfo, QueuedPodInfo } from "./types.ts";

export interface Plugin {
  name(): string;
}

/** PreEnqueue: runs before a pod enters activeQ; a non-success keeps it out (SchedulingGates). */
export interface PreEnqueuePlugin extends Plugin {
  preEnqueue(pod: Pod): Status | undefined;
}

/** LessFunc: the QueueSort plugin's order of activeQ. */
export type LessFunc = (a: QueuedPodInfo, b: QueuedPodInfo) => boolean;

export interface QueueSortPlugin extends Plugin {
  less: LessFunc;
}

/** EnqueueExtensions: the events after which a pod this plugin rejected may be schedulable. */
export interface EnqueueExtensions extends Plugin {
  eventsToRegister(): ClusterEventWithHint[];
}

// #region nominating-info
export enum NominatingMode {
  /** Keep whatever nomination the pod already has (status.nominatedNodeName). */
  ModeNoop = 0,
  /** Set (or clear, with "") the nomination to `nominatedNodeName`. */
  ModeOverride = 1,
}

export interface NominatingInfo {
  nominatedNodeName: string;
  nominatingMode: NominatingMode;
}

export const nominatingModeOf = (ni: NominatingInfo | undefined): NominatingMode =>
  ni?.nominatingMode ?? NominatingMode.ModeNoop;
// #endregion nominating-info

/** PodNominator: who is nominated to which node (by preemption), so Filter counts them there. */
export interface PodNominator {
  addNominatedPod(pi: PodInfo, nominatingInfo?: NominatingInfo): void;
  deleteNominatedPodIfExists(pod: Pod): void;
  updateNominatedPod(oldPod: Pod, newPodInfo: PodInfo): void;
  nominatedPodsForNode(nodeName: string): PodInfo[];
}

// #region scheduling-points
/** PreFilterResult: the nodes a PreFilter already knows are the only candidates; undefined: all. */
export interface PreFilterResult {
  nodeNames?: Set<string>;
}

/** Merge: the intersection — a node must be allowed by every PreFilter that names nodes. */
export function mergePreFilterResults(a: PreFilterResult | undefined, b: PreFilterResult | undefined) {
  if (!a?.nodeNames) return b;
  if (!b?.nodeNames) return a;
  const names = new Set([...a.nodeNames].filter((n) => b.nodeNames!.has(n)));
  return { nodeNames: names };
}

/** PreFilter: once per cycle, before any Filter; Skip means "my Filter has nothing to check". */
export interface PreFilterPlugin extends Plugin {
  preFilter(state: CycleState, pod: Pod): [PreFilterResult | undefined, Status | undefined];
  /** Absent or undefined: the plugin's PreFilter state does not depend on other pods. */
  preFilterExtensions?(): PreFilterExtensions | undefined;
}

/**
 * PreFilterExtensions: update a plugin's PreFilter state as if `podInfo` were added to (or
 * removed from) `nodeInfo` — how Filter counts nominated pods and how preemption tries
 * "this node without these victims" without recomputing PreFilter from scratch.
 */
export interface PreFilterExtensions {
  addPod(
    state: CycleState,
    podToSchedule: Pod,
    podInfoToAdd: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined;
  removePod(
    state: CycleState,
    podToSchedule: Pod,
    podInfoToRemove: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined;
}

/** Filter: may the pod run on this node? Called per node, so it must be cheap and pure. */
export interface FilterPlugin extends Plugin {
  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined;
}

/** PostFilterResult: what a PostFilter (preemption) achieved — a nominated node. */
export interface PostFilterResult {
  nominatingInfo?: NominatingInfo;
}

/** PostFilter: runs when no node passed Filter — preemption lives here. */
export interface PostFilterPlugin extends Plugin {
  postFilter(
    state: CycleState,
    pod: Pod,
    filteredNodeStatusMap: NodeToStatus,
  ): [PostFilterResult | undefined, Status | undefined];
}

/** PreScore: once per cycle over the feasible nodes; Skip means "my Score would say nothing". */
export interface PreScorePlugin extends Plugin {
  preScore(state: CycleState, pod: Pod, nodes: NodeInfo[]): Status | undefined;
}

export const MaxNodeScore = 100;
export const MinNodeScore = 0;

export interface NodeScore {
  name: string;
  score: number;
}

/** ScoreExtensions: rescale one plugin's raw scores (all feasible nodes) into 0–100. */
export interface ScoreExtensions {
  normalizeScore(state: CycleState, pod: Pod, scores: NodeScore[]): Status | undefined;
}

export interface ScorePlugin extends Plugin {
  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined];
  scoreExtensions(): ScoreExtensions | undefined;
}

/** PluginScore / NodePluginScores: a node's weighted score per plugin and their sum. */
export interface PluginScore {
  name: string;
  score: number;
}

export interface NodePluginScores {
  name: string;
  scores: PluginScore[];
  totalScore: number;
}
// #endregion scheduling-points

// #region binding-points
/** Reserve: claim plugin-held state for the chosen node; Unreserve undoes it on any later failure. */
export interface ReservePlugin extends Plugin {
  reserve(state: CycleState, pod: Pod, nodeName: string): Status | undefined;
  /** Must be idempotent and must not fail: it may run for a Reserve that never ran. */
  unreserve(state: CycleState, pod: Pod, nodeName: string): void;
}

/** Permit: Success, Unschedulable (reject) or Wait with a timeout in ms (gang scheduling). */
export interface PermitPlugin extends Plugin {
  permit(state: CycleState, pod: Pod, nodeName: string): [Status | undefined, number];
}

export interface PreBindPlugin extends Plugin {
  preBind(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined>;
}

/** Bind: Skip hands the pod to the next binder; the first non-Skip answer is final. */
export interface BindPlugin extends Plugin {
  bind(state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined>;
}

/** PostBind: informational, after a successful bind; cannot fail. */
export interface PostBindPlugin extends Plugin {
  postBind(state: CycleState, pod: Pod, nodeName: string): void;
}
// #endregion binding-points
