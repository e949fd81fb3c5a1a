/**
 * Solution: LeastAllocated (upstream: pkg/scheduler/framework/plugins/noderesources/least_allocated.go).
 */

import type { ResourceSpec } from "../../../code/scheduler/apis/config/types-pluginargs.ts";
import { MaxNodeScore } from "../../../code/scheduler/framework/interface.ts";

export function leastRequestedScore(requested: number, capacity: number): number {
  // Nothing to offer, or already over: the worst score, never a negative one.
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
    // A resource the node does not have (or the pod does not ask for, for extended ones) says
    // nothing about this node: it counts neither in the sum nor in the weights.
    if (allocatable[i] === 0) continue;
    nodeScore += leastRequestedScore(requested[i], allocatable[i]) * r.weight;
    weightSum += r.weight;
  }
  if (weightSum === 0) return 0;
  return Math.trunc(nodeScore / weightSum);
}
