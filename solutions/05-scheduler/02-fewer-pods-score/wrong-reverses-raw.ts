// Mistake: the raw count is reversed without scaling, `100 − pods`. Plausible, and right while
// every node runs fewer than 100 pods. But a node may run 110 (the default limit) or more: its
// score goes negative, the framework rejects it ("returns an invalid score … should in the range
// of [0, 100]") and the pod is not scheduled at all.
import type { Pod } from "../../../code/api/core.ts";
import type { CycleState } from "../../../code/scheduler/framework/cycle-state.ts";
import { MaxNodeScore, type NodeScore } from "../../../code/scheduler/framework/interface.ts";
import type { Status } from "../../../code/scheduler/framework/status.ts";
import { FewerPods as Correct } from "./fewer-pods.ts";

export { Name } from "./fewer-pods.ts";

export class FewerPods extends Correct {
  override normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    for (const s of scores) s.score = MaxNodeScore - s.score;
    return undefined;
  }
}
