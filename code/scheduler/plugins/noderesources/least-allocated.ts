/**
 * LeastAllocated — the default scoring strategy of NodeResourcesFit: the emptier the node
 * (after adding this pod), the higher the score; a weighted mean over the resources.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/least_allocated.go (leastResourceScorer, leastRequestedScore)
 * @chapter 05-scheduler
 *
 * Solves: spreading load — a new pod goes where most room is left, so no node runs hot while
 * others idle, and a node failure takes fewer pods with it.
 *
 * Invariants: per resource `(capacity − requested) × 100 / capacity` in integer division, 0
 * when capacity is 0 or requested exceeds it; the node's score is
 * `Σ score_r × weight_r / Σ weight_r` (integer division), over resources with capacity > 0.
 */
import type { ResourceSpec } from "../../apis/config/types-pluginargs.ts";
import { MaxNodeScore } from "../../framework/interface.ts";

// #region least-allocated
export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MaxNodeScore) / capacity);
}

export function leastResourceScorer(
  requested: number[],
  allocatable: number[],
  resources: ResourceSpec[],
): number {
  let nodeScore = 0;
  let weightSum = 0;
  for (const [i, r] of resources.entries()) {
    if (allocatable[i] === 0) continue;
    nodeScore += leastRequestedScore(requested[i], allocatable[i]) * r.weight;
    weightSum += r.weight;
  }
  if (weightSum === 0) return 0;
  return Math.trunc(nodeScore / weightSum);
}
// #endregion least-allocated
