/**
 * TaintToleration — Filter: a node's NoSchedule / NoExecute taints must each be tolerated;
 * Score: fewer untolerated PreferNoSchedule taints is better (reversed, normalized to 0–100).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go (TaintToleration, Filter, PreScore, Score, NormalizeScore, getAllTolerationPreferNoSchedule, countIntolerableTaintsPreferNoSchedule, ErrReasonNotMatch, EventsToRegister)
 * @chapter 05-scheduler
 *
 * Solves: taints let a node repel pods (dedicated nodes, a node going down) without every pod
 * having to say where not to go; the soft effect (PreferNoSchedule) becomes a score, so such a
 * node is used only when better ones are full.
 *
 * Invariants:
 * - Filter: UnschedulableAndUnresolvable naming the first untolerated hard taint as
 *   "node(s) had untolerated taint {key: value}".
 * - Score counts only PreferNoSchedule taints, against the pod's tolerations whose effect is
 *   PreferNoSchedule or empty (computed once in PreScore); NormalizeScore reverses.
 */
import type { Pod, Taint, Toleration } from "../../../api/core.ts";
import type { CycleState, StateData } from "../../framework/cycle-state.ts";
import { NotFoundError } from "../../framework/cycle-state.ts";
import { ActionType, type ClusterEventWithHint } from "../../framework/events.ts";
import {
  type EnqueueExtensions,
  type FilterPlugin,
  MaxNodeScore,
  type NodeScore,
  type PreScorePlugin,
  type ScoreExtensions,
  type ScorePlugin,
} from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { asStatus, Code, newStatus, type Status } from "../../framework/status.ts";
import { defaultNormalizeScore } from "../helper/normalize-score.ts";
import { findMatchingUntoleratedTaint, tolerationsTolerateTaint } from "../helper/taints.ts";

export const Name = "TaintToleration";
export const ErrReasonNotMatch = "node(s) had taints that the pod didn't tolerate";
const preScoreStateKey = `PreScore${Name}`;

class PreScoreState implements StateData {
  constructor(readonly tolerationsPreferNoSchedule: Toleration[]) {}
  clone(): StateData {
    return this;
  }
}

export class TaintToleration
  implements FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions
{
  name(): string {
    return Name;
  }

  // #region filter
  filter(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const taint = findMatchingUntoleratedTaint(
      nodeInfo.node()?.spec?.taints,
      pod.spec.tolerations,
      (t) => t.effect === "NoSchedule" || t.effect === "NoExecute",
    );
    if (!taint) return undefined;
    return newStatus(
      Code.UnschedulableAndUnresolvable,
      `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ""}}`,
    );
  }
  // #endregion filter

  // #region score
  preScore(state: CycleState, pod: Pod, _nodes: NodeInfo[]): Status | undefined {
    const tolerations = (pod.spec.tolerations ?? []).filter(
      (t) => !t.effect || t.effect === "PreferNoSchedule",
    );
    state.write(preScoreStateKey, new PreScoreState(tolerations));
    return undefined;
  }

  score(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    const s = state.read(preScoreStateKey);
    if (s instanceof NotFoundError) {
      return [0, asStatus(new Error(`reading "${preScoreStateKey}" from cycleState: ${s.message}`))];
    }
    return [
      countIntolerableTaintsPreferNoSchedule(
        nodeInfo.node()?.spec?.taints,
        (s as PreScoreState).tolerationsPreferNoSchedule,
      ),
      undefined,
    ];
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  /** Fewer intolerable taints is better: reverse. */
  normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    defaultNormalizeScore(MaxNodeScore, true, scores);
    return undefined;
  }
  // #endregion score

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      { event: { resource: "Node", actionType: ActionType.Add | ActionType.UpdateNodeTaint } },
      { event: { resource: "Pod", actionType: ActionType.UpdatePodTolerations } },
    ];
  }
}

export function countIntolerableTaintsPreferNoSchedule(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[],
): number {
  let n = 0;
  for (const taint of taints ?? []) {
    if (taint.effect !== "PreferNoSchedule") continue;
    if (!tolerationsTolerateTaint(tolerations, taint)) n++;
  }
  return n;
}
