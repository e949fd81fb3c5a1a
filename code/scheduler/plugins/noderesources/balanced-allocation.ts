/**
 * NodeResourcesBalancedAllocation — prefer the node whose resources would be used most evenly
 * (CPU fraction close to memory fraction) after placing the pod.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go (BalancedAllocation, PreScore, Score, balancedResourceScorer, BalancedAllocationName)
 * @chapter 05-scheduler
 *
 * Solves: LeastAllocated alone may fill a node's memory while its CPU idles; that CPU is then
 * stranded (no pod fits in the leftover memory). Scoring the spread between fractions keeps
 * the shapes of free capacity usable.
 *
 * Invariants:
 * - fraction_r = requested_r / allocatable_r, capped at 1, over resources with allocatable > 0
 *   (real requests, not the non-zero defaults);
 * - with two resources std = |f1 − f2| / 2, with more the population standard deviation, with
 *   one 0; score = trunc((1 − std) × 100).
 * - a pod requesting none of the resources is scored like any other, by the node's own balance
 *   (v1.32; skipping such pods at PreScore arrived in v1.33 with kubernetes/kubernetes#130260).
 */

import type { Pod } from "../../../api/core.ts";
import type { ResourceSpec } from "../../apis/config/types-pluginargs.ts";
import type { CycleState, StateData } from "../../framework/cycle-state.ts";
import { NotFoundError } from "../../framework/cycle-state.ts";
import {
  MaxNodeScore,
  type PreScorePlugin,
  type ScoreExtensions,
  type ScorePlugin,
} from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import type { Status } from "../../framework/status.ts";
import { defaultResourceSpec, ResourceAllocationScorer } from "./resource-allocation.ts";

export const BalancedAllocationName = "NodeResourcesBalancedAllocation";
const preScoreStateKey = `PreScore${BalancedAllocationName}`;

// #region balanced
export function balancedResourceScorer(requested: number[], allocatable: number[]): number {
  const fractions: number[] = [];
  let total = 0;
  for (const [i, alloc] of allocatable.entries()) {
    if (alloc === 0) continue;
    const f = Math.min(requested[i] / alloc, 1);
    total += f;
    fractions.push(f);
  }
  let std = 0;
  if (fractions.length === 2) {
    std = Math.abs((fractions[0] - fractions[1]) / 2);
  } else if (fractions.length > 2) {
    const mean = total / fractions.length;
    let sum = 0;
    for (const f of fractions) sum += (f - mean) * (f - mean);
    std = Math.sqrt(sum / fractions.length);
  }
  return Math.trunc((1 - std) * MaxNodeScore);
}
// #endregion balanced

class PreScoreState implements StateData {
  constructor(readonly podRequests: number[]) {}
  clone(): StateData {
    return this;
  }
}

export class BalancedAllocation implements PreScorePlugin, ScorePlugin {
  private readonly scorer: ResourceAllocationScorer;
  constructor(resources: ResourceSpec[] = defaultResourceSpec) {
    this.scorer = new ResourceAllocationScorer(
      BalancedAllocationName,
      balancedResourceScorer,
      true,
      resources,
    );
  }

  name(): string {
    return BalancedAllocationName;
  }

  preScore(state: CycleState, pod: Pod, _nodes: NodeInfo[]): Status | undefined {
    state.write(preScoreStateKey, new PreScoreState(this.scorer.podRequestList(pod)));
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    const s = state.read(preScoreStateKey);
    // Without PreScore (a caller that skipped it), compute the requests here, as upstream.
    const reqs =
      s instanceof NotFoundError ? this.scorer.podRequestList(pod) : (s as PreScoreState).podRequests;
    return [this.scorer.score(nodeInfo, reqs), undefined];
  }

  scoreExtensions(): ScoreExtensions | undefined {
    return undefined;
  }
}
