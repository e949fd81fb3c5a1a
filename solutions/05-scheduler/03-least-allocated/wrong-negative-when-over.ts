// Mistake: no guard for requested > capacity, so an overcommitted resource scores negative.
// Plausible: Filter already keeps pods off full nodes — but only for the resources it checks and
// only when Fit's Filter is enabled; the framework rejects a score below 0 and the whole cycle
// fails, so the pod is not scheduled anywhere.

import type { ResourceSpec } from "../../../code/scheduler/apis/config/types-pluginargs.ts";
import { MaxNodeScore } from "../../../code/scheduler/framework/interface.ts";

export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0) return 0;
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
  return weightSum === 0 ? 0 : Math.trunc(nodeScore / weightSum);
}
