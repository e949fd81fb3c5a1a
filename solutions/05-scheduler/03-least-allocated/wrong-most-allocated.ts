// Mistake: the fraction used, requested × 100 / capacity, instead of the fraction free.
// Plausible: "score by allocation" — and it is a real strategy, MostAllocated (bin packing). But
// LeastAllocated is the default to spread load: this sends every pod to the fullest node.

import type { ResourceSpec } from "../../../code/scheduler/apis/config/types-pluginargs.ts";
import { MaxNodeScore } from "../../../code/scheduler/framework/interface.ts";

export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.trunc((requested * MaxNodeScore) / capacity);
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
