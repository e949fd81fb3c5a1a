/**
 * Solution: FewerPods — a raw pod count, normalized as upstream's helper.DefaultNormalizeScore
 * with reverse (pkg/scheduler/framework/plugins/helper/normalize_score.go).
 */
import type { Pod } from "../../../code/api/core.ts";
import type { CycleState } from "../../../code/scheduler/framework/cycle-state.ts";
import {
  MaxNodeScore,
  type NodeScore,
  type ScoreExtensions,
  type ScorePlugin,
} from "../../../code/scheduler/framework/interface.ts";
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import type { Status } from "../../../code/scheduler/framework/status.ts";

export const Name = "FewerPods";

export class FewerPods implements ScorePlugin, ScoreExtensions {
  name(): string {
    return Name;
  }

  score(_state: CycleState, _pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    return [nodeInfo.pods.length, undefined];
  }

  scoreExtensions(): ScoreExtensions | undefined {
    return this;
  }

  normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    let max = 0;
    for (const s of scores) max = Math.max(max, s.score);
    // Every node empty: all equally good — the best score, not 0.
    if (max === 0) {
      for (const s of scores) s.score = MaxNodeScore;
      return undefined;
    }
    // Scale so the busiest node is 100, then reverse: the emptiest gets the most. Integer
    // division, as Go's int64.
    for (const s of scores) s.score = MaxNodeScore - Math.trunc((MaxNodeScore * s.score) / max);
    return undefined;
  }
}
