/**
 * MostAllocated — a scoring strategy of NodeResourcesFit: the fuller the node (after adding
 * this pod), the higher the score; a weighted mean over the resources. LeastAllocated reversed.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/most_allocated.go (mostResourceScorer, mostRequestedScore)
 * @chapter 05-scheduler
 *
 * Solves: bin packing — fill nodes one after another so that empty ones can be scaled away
 * (cluster autoscaler) or kept free for a large pod.
 *
 * Invariants: per resource `min(requested, capacity) × 100 / capacity` in integer division
 * (requested may exceed capacity because request-less pods count the non-zero defaults), 0
 * when capacity is 0; the node's score is `Σ score_r × weight_r / Σ weight_r` (integer
 * division) over resources with capacity > 0.
 */
import type { ResourceSpec } from "../../apis/config/types-pluginargs.ts";
import { MaxNodeScore } from "../../framework/interface.ts";

// #region most-allocated
export function mostRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0) return 0;
  return Math.trunc((Math.min(requested, capacity) * MaxNodeScore) / capacity);
}

export function mostResourceScorer(
  requested: number[],
  allocatable: number[],
  resources: ResourceSpec[],
): number {
  let nodeScore = 0;
  let weightSum = 0;
  for (const [i, r] of resources.entries()) {
    if (allocatable[i] === 0) continue;
    nodeScore += mostRequestedScore(requested[i], allocatable[i]) * r.weight;
    weightSum += r.weight;
  }
  if (weightSum === 0) return 0;
  return Math.trunc(nodeScore / weightSum);
}
// #endregion most-allocated
