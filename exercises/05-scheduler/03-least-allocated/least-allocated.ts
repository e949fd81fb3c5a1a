/**
 * Exercise: LeastAllocated, NodeResourcesFit's default scoring — the emptier a node would be
 * with this pod, the higher it scores: per resource (capacity − requested) × 100 / capacity, then
 * a weighted mean over the resources. README.md has the rules.
 */
import type { ResourceSpec } from "../../../code/scheduler/apis/config/types-pluginargs.ts";

/** One resource's score, 0–100: how much of `capacity` is still free once `requested` is taken. */
export function leastRequestedScore(requested: number, capacity: number): number {
  throw new Error(`TODO: leastRequestedScore — ${requested} of ${capacity}`);
}

/**
 * The node's score: `requested[i]` (the node's pods plus this one) and `allocatable[i]` are the
 * amounts of `resources[i]`; a resource with allocatable 0 is not part of the score.
 */
export function leastResourceScorer(
  requested: number[],
  allocatable: number[],
  resources: ResourceSpec[],
): number {
  throw new Error(
    `TODO: leastResourceScorer — ${resources.map((r, i) => `${r.name} ${requested[i]}/${allocatable[i]}`).join(", ")}`,
  );
}
