// Mistake: a resource with allocatable 0 still counts its weight (scoring 0).
// Plausible: "the node has none of it, so it scores 0 for it". But the resource list is the
// profile's, not the pod's: configure `example.com/gpu` for the GPU nodes and every CPU-only
// node's score drops by a third for a resource the pod never asked for.
import type { ResourceSpec } from "../../../code/scheduler/apis/config/types-pluginargs.ts";
import { leastRequestedScore } from "./least-allocated.ts";

export { leastRequestedScore } from "./least-allocated.ts";

export function leastResourceScorer(
  requested: number[],
  allocatable: number[],
  resources: ResourceSpec[],
): number {
  let nodeScore = 0;
  let weightSum = 0;
  for (const [i, r] of resources.entries()) {
    nodeScore += leastRequestedScore(requested[i], allocatable[i]) * r.weight;
    weightSum += r.weight;
  }
  return weightSum === 0 ? 0 : Math.trunc(nodeScore / weightSum);
}
