/**
 * PodTopologySpread's hard half (whenUnsatisfiable: DoNotSchedule) — PreFilter counts the
 * matching pods per topology domain, Filter rejects a node whose domain would then exceed the
 * constraint's maxSkew over the emptiest domain, AddPod / RemovePod adjust the counts.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering.go (preFilterState, minMatchNum, Clone, criticalPaths, update, PreFilter, AddPod, RemovePod, updateWithPod, calPreFilterState, Filter)
 * @chapter 05-scheduler
 *
 * Solves: "is zone a too full?" needs the count of every zone and the minimum over them.
 * Computing that per node would cost nodes² per pod, so PreFilter counts once per cycle and
 * keeps, per constraint, the two emptiest domains ("critical paths"); Filter is then a lookup
 * and a subtraction.
 *
 * Invariants:
 * - `tpValueToMatchNum[i]` has an entry for every domain of constraint i with at least one
 *   eligible node (a node with all topology keys that passes the inclusion policies), even
 *   if it counts 0 pods — so `size` is the number of eligible domains.
 * - `criticalPaths[i][0].matchNum` is the minimum over `tpValueToMatchNum[i]`;
 *   `[1].matchNum` ≥ it (not necessarily the second minimum). Two are kept because a
 *   RemovePod/AddPod can raise the minimum domain's count, and the other may become the minimum.
 * - skew = count(node's domain) + (1 if the pod matches its own selector) − global minimum,
 *   where the global minimum is 0 when fewer than minDomains domains exist.
 */
import type { Node, Pod } from "../../../api/core.ts";
import { selectorMatches } from "../../../api/labels.ts";
import { getRequiredNodeAffinity } from "../../../api/node-affinity.ts";
import type { StateData } from "../../framework/cycle-state.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { Code, newStatus, type Status } from "../../framework/status.ts";
import {
  countPodsMatchSelector,
  matchNodeInclusionPolicies,
  nodeLabelsMatchSpreadConstraints,
  type SpreadConstraint,
} from "./common.ts";

export const ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints";
export const ErrReasonNodeLabelNotMatch = `${ErrReasonConstraintsNotMatch} (missing required label)`;

// #region critical-paths
const MaxInt32 = 2 ** 31 - 1;

interface CriticalPath {
  topologyValue: string;
  matchNum: number;
}

/** criticalPaths: the two domains with the fewest matching pods (as far as updates tell). */
export class CriticalPaths {
  readonly paths: [CriticalPath, CriticalPath] = [
    { topologyValue: "", matchNum: MaxInt32 },
    { topologyValue: "", matchNum: MaxInt32 },
  ];

  update(tpVal: string, num: number): void {
    const p = this.paths;
    const i = tpVal === p[0].topologyValue ? 0 : tpVal === p[1].topologyValue ? 1 : undefined;
    if (i !== undefined) {
      // A known domain changed its count: keep [0] the smaller.
      p[i].matchNum = num;
      if (p[0].matchNum > p[1].matchNum) [p[0], p[1]] = [p[1], p[0]];
    } else if (num < p[0].matchNum) {
      p[1] = p[0];
      p[0] = { topologyValue: tpVal, matchNum: num };
    } else if (num < p[1].matchNum) {
      p[1] = { topologyValue: tpVal, matchNum: num };
    }
  }

  clone(): CriticalPaths {
    const c = new CriticalPaths();
    c.paths[0] = { ...this.paths[0] };
    c.paths[1] = { ...this.paths[1] };
    return c;
  }
}
// #endregion critical-paths

// #region prefilter-state
export class PreFilterState implements StateData {
  constructor(
    /** Shared by clones: constraints never change within a cycle. */
    readonly constraints: SpreadConstraint[],
    readonly criticalPaths: CriticalPaths[],
    readonly tpValueToMatchNum: Map<string, number>[],
  ) {}

  /** minMatchNum: the global minimum for the skew, 0 while there are fewer than minDomains domains. */
  minMatchNum(i: number, minDomains: number): number {
    if (this.tpValueToMatchNum[i].size < minDomains) return 0;
    return this.criticalPaths[i].paths[0].matchNum;
  }

  /** Preemption tries victims on a clone: the counts must not leak back into this one. */
  clone(): PreFilterState {
    return new PreFilterState(
      this.constraints,
      this.criticalPaths.map((p) => p.clone()),
      this.tpValueToMatchNum.map((m) => new Map(m)),
    );
  }
}
// #endregion prefilter-state

// #region cal-prefilter-state
/** calPreFilterState: the per-domain counts of matching pods, over every node in `allNodes`. */
export function calPreFilterState(
  constraints: SpreadConstraint[],
  pod: Pod,
  allNodes: readonly NodeInfo[],
): PreFilterState {
  const tpValueToMatchNum = constraints.map(() => new Map<string, number>());
  const required = getRequiredNodeAffinity(pod);
  const ns = pod.metadata.namespace ?? "";
  for (const nodeInfo of allNodes) {
    const node = nodeInfo.node();
    if (!node) continue;
    // A node missing any topology key belongs to no domain of any constraint.
    if (!nodeLabelsMatchSpreadConstraints(node.metadata.labels, constraints)) continue;
    for (let i = 0; i < constraints.length; i++) {
      const c = constraints[i];
      if (!matchNodeInclusionPolicies(c, pod, node, required)) continue;
      const value = node.metadata.labels![c.topologyKey];
      const count = countPodsMatchSelector(nodeInfo.pods, c.selector, ns);
      tpValueToMatchNum[i].set(value, (tpValueToMatchNum[i].get(value) ?? 0) + count);
    }
  }
  const criticalPaths = tpValueToMatchNum.map((m) => {
    const p = new CriticalPaths();
    for (const [value, num] of m) p.update(value, num);
    return p;
  });
  return new PreFilterState(constraints, criticalPaths, tpValueToMatchNum);
}
// #endregion cal-prefilter-state

// #region filter
/** Filter: would placing the pod on this node push any constraint's skew past maxSkew? */
export function filterNode(s: PreFilterState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
  if (s.constraints.length === 0) return undefined;
  const labels = nodeInfo.node()?.metadata.labels ?? {};
  const podLabels = pod.metadata.labels ?? {};
  for (let i = 0; i < s.constraints.length; i++) {
    const c = s.constraints[i];
    const tpVal = labels[c.topologyKey];
    // No label, no domain: no eviction changes that, so preemption need not try this node.
    if (tpVal === undefined) return newStatus(Code.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch);
    const minMatchNum = s.minMatchNum(i, c.minDomains);
    const selfMatchNum = selectorMatches(c.selector, podLabels) ? 1 : 0;
    const matchNum = s.tpValueToMatchNum[i].get(tpVal) ?? 0;
    const skew = matchNum + selfMatchNum - minMatchNum;
    if (skew > c.maxSkew) return newStatus(Code.Unschedulable, ErrReasonConstraintsNotMatch);
  }
  return undefined;
}
// #endregion filter

// #region update-with-pod
/**
 * updateWithPod: count `updatedPod` in (delta 1) or out of (delta −1) its node's domains, as
 * PreFilter would have had it been there — same namespace, node eligible, selector matching.
 */
export function updateWithPod(
  s: PreFilterState,
  updatedPod: Pod,
  preemptorPod: Pod,
  node: Node | undefined,
  delta: 1 | -1,
): void {
  if (!node || (updatedPod.metadata.namespace ?? "") !== (preemptorPod.metadata.namespace ?? "")) return;
  if (!nodeLabelsMatchSpreadConstraints(node.metadata.labels, s.constraints)) return;
  const required = getRequiredNodeAffinity(preemptorPod);
  const podLabels = updatedPod.metadata.labels ?? {};
  s.constraints.forEach((c, i) => {
    if (!selectorMatches(c.selector, podLabels)) return;
    if (!matchNodeInclusionPolicies(c, preemptorPod, node, required)) return;
    const v = node.metadata.labels![c.topologyKey];
    const n = (s.tpValueToMatchNum[i].get(v) ?? 0) + delta;
    s.tpValueToMatchNum[i].set(v, n);
    s.criticalPaths[i].update(v, n);
  });
}
// #endregion update-with-pod
