/**
 * RequestedToCapacityRatio — a scoring strategy of NodeResourcesFit: each resource's
 * utilization (after adding this pod) goes through an operator-drawn curve, and the node's
 * score is the weighted mean of the results.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio.go (requestedToCapacityRatioScorer, buildRequestedToCapacityRatioScorerFunction, maxUtilization)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types_pluginargs.go (UtilizationShapePoint, MaxCustomPriorityScore)
 * @chapter 05-scheduler
 *
 * Solves: LeastAllocated and MostAllocated are two fixed lines; an operator packing GPU nodes
 * but spreading CPU, or packing only up to 80 %, needs a curve per cluster — and weights that
 * make an extended resource (`nvidia.com/gpu`) count more than CPU.
 *
 * Invariants:
 * - shape scores are 0–10 (MaxCustomPriorityScore) and are scaled ×10 onto 0–100.
 * - utilization = trunc(requested × 100 / capacity); an over-committed or capacity-less
 *   resource is taken at utilization 100.
 * - only resources with capacity > 0 and a score > 0 enter the mean (a 0 adds neither score
 *   nor weight); the mean is rounded (math.Round), not truncated — unlike the other two.
 */
import type { ResourceSpec, UtilizationShapePoint } from "../../apis/config/types-pluginargs.ts";
import { MaxNodeScore } from "../../framework/interface.ts";
import { buildBrokenLinearFunction, type FunctionShapePoint } from "../helper/shape-score.ts";

/** MaxCustomPriorityScore: the top of the shape's score scale (config.MaxCustomPriorityScore). */
export const MaxCustomPriorityScore = 10;
const maxUtilization = 100;

// #region rtcr
export function requestedToCapacityRatioScorer(
  shape: readonly UtilizationShapePoint[],
): (requested: number[], allocatable: number[], resources: ResourceSpec[]) => number {
  const points: FunctionShapePoint[] = shape.map((p) => ({
    utilization: p.utilization,
    // The shape speaks 0–10; the scheduler 0–100.
    score: p.score * Math.trunc(MaxNodeScore / MaxCustomPriorityScore),
  }));
  const raw = buildBrokenLinearFunction(points);
  const resourceScore = (requested: number, capacity: number): number => {
    if (capacity === 0 || requested > capacity) return raw(maxUtilization);
    return raw(Math.trunc((requested * maxUtilization) / capacity));
  };
  return (requested, allocatable, resources) => {
    let nodeScore = 0;
    let weightSum = 0;
    for (const [i, r] of resources.entries()) {
      if (allocatable[i] === 0) continue;
      const s = resourceScore(requested[i], allocatable[i]);
      if (s > 0) {
        nodeScore += s * r.weight;
        weightSum += r.weight;
      }
    }
    if (weightSum === 0) return 0;
    return goRound(nodeScore / weightSum);
  };
}
// #endregion rtcr

/** Go's math.Round: half away from zero (JavaScript's Math.round rounds −0.5 up; scores are ≥ 0). */
function goRound(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}
