/**
 * NodeName — a pod that names its node (spec.nodeName) fits only that node.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/nodename/node_name.go (NodeName, Filter, Fits, ErrReason, EventsToRegister)
 * @chapter 05-scheduler
 *
 * Solves: the scheduler normally skips pods with a nodeName (they are not its to place), but a
 * pod may be created with one and still reach the framework (a nominated re-check, a
 * simulation); without this Filter another node could be chosen.
 *
 * Invariants: UnschedulableAndUnresolvable — evicting pods never changes a node's name.
 */
import type { Pod } from "../../../api/core.ts";
import type { CycleState } from "../../framework/cycle-state.ts";
import { ActionType, type ClusterEventWithHint } from "../../framework/events.ts";
import type { EnqueueExtensions, FilterPlugin } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { Code, newStatus, type Status } from "../../framework/status.ts";

export const Name = "NodeName";
export const ErrReason = "node(s) didn't match the requested node name";

/** Fits: no nodeName, or the node's name. */
export const fits = (pod: Pod, nodeInfo: NodeInfo): boolean =>
  !pod.spec.nodeName || pod.spec.nodeName === nodeInfo.nodeName();

export class NodeName implements FilterPlugin, EnqueueExtensions {
  name(): string {
    return Name;
  }

  // #region filter
  filter(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    if (!fits(pod, nodeInfo)) return newStatus(Code.UnschedulableAndUnresolvable, ErrReason);
    return undefined;
  }
  // #endregion filter

  eventsToRegister(): ClusterEventWithHint[] {
    return [{ event: { resource: "Node", actionType: ActionType.Add | ActionType.UpdateNodeLabel } }];
  }
}
