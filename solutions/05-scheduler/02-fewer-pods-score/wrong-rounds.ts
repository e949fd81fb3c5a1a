// Mistake: the scaled score is rounded instead of truncated. Plausible — rounding feels more
// accurate — but upstream computes in Go's int64, where division truncates; with 2 pods of at
// most 3 the node gets 100 − 67 = 33 instead of 100 − 66 = 34, and with other plugins' scores
// added, a tie can break the other way.
import type { Pod } from "../../../code/api/core.ts";
import type { CycleState } from "../../../code/scheduler/framework/cycle-state.ts";
import { MaxNodeScore, type NodeScore } from "../../../code/scheduler/framework/interface.ts";
import type { Status } from "../../../code/scheduler/framework/status.ts";
import { FewerPods as Correct } from "./fewer-pods.ts";

export { Name } from "./fewer-pods.ts";

export class FewerPods extends Correct {
  override normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    const max = Math.max(0, ...scores.map((s) => s.score));
    for (const s of scores)
      s.score = max === 0 ? MaxNodeScore : MaxNodeScore - Math.round((MaxNodeScore * s.score) / max);
    return undefined;
  }
}
