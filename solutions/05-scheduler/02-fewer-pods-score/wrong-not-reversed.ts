// Mistake: the counts are scaled to 0–100 but not reversed, so the busiest node scores 100.
// Plausible: "normalize" sounds like the whole job. But a higher score always wins: this plugin
// would pile every new pod onto the node that already runs the most.
import type { Pod } from "../../../code/api/core.ts";
import type { CycleState } from "../../../code/scheduler/framework/cycle-state.ts";
import { MaxNodeScore, type NodeScore } from "../../../code/scheduler/framework/interface.ts";
import type { Status } from "../../../code/scheduler/framework/status.ts";
import { FewerPods as Correct } from "./fewer-pods.ts";

export { Name } from "./fewer-pods.ts";

export class FewerPods extends Correct {
  override normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    const max = Math.max(0, ...scores.map((s) => s.score));
    if (max === 0) return undefined;
    for (const s of scores) s.score = Math.trunc((MaxNodeScore * s.score) / max);
    return undefined;
  }
}
