/**
 * Exercise: a Score plugin of your own — FewerPods prefers nodes running fewer pods. Score
 * returns a raw count; NormalizeScore turns the counts of all feasible nodes into 0–100, fewer
 * pods scoring higher. README.md has the rules.
 */
import type { Pod } from "../../../code/api/core.ts";
import type { CycleState } from "../../../code/scheduler/framework/cycle-state.ts";
import type { NodeScore, ScoreExtensions, ScorePlugin } from "../../../code/scheduler/framework/interface.ts";
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import type { Status } from "../../../code/scheduler/framework/status.ts";

export const Name = "FewerPods";

export class FewerPods implements ScorePlugin, ScoreExtensions {
  name(): string {
    return Name;
  }

  /** The raw score of one node (any non-negative number). */
  score(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    throw new Error(`TODO: FewerPods.score — ${pod.metadata.name} on ${nodeInfo.nodeName()}`);
  }

  scoreExtensions(): ScoreExtensions | undefined {
    return this;
  }

  /** Rewrites `scores` in place: every score in 0–100, the node with fewest pods highest. */
  normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    throw new Error(`TODO: FewerPods.normalizeScore — ${scores.length} nodes`);
  }
}
