/**
 * NodeUnschedulable — a cordoned node (spec.unschedulable) takes only pods that tolerate the
 * node.kubernetes.io/unschedulable:NoSchedule taint.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go (NodeUnschedulable, Filter, ErrReasonUnschedulable, EventsToRegister)
 * @chapter 05-scheduler
 *
 * Solves: `kubectl cordon` must stop new pods at once, before (or without) the node lifecycle
 * controller adding the matching taint; DaemonSet pods tolerate it and still land.
 *
 * Invariants: UnschedulableAndUnresolvable — eviction does not uncordon a node.
 */
import type { Pod, Taint } from "../../../api/core.ts";
import type { CycleState } from "../../framework/cycle-state.ts";
import { ActionType, type ClusterEventWithHint } from "../../framework/events.ts";
import type { EnqueueExtensions, FilterPlugin } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { Code, newStatus, type Status } from "../../framework/status.ts";
import { tolerationsTolerateTaint } from "../helper/taints.ts";

export const Name = "NodeUnschedulable";
export const ErrReasonUnschedulable = "node(s) were unschedulable";
export const TaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

const unschedulableTaint: Taint = { key: TaintNodeUnschedulable, effect: "NoSchedule" };

export class NodeUnschedulable implements FilterPlugin, EnqueueExtensions {
  name(): string {
    return Name;
  }

  // #region filter
  filter(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const node = nodeInfo.node();
    if (!node?.spec?.unschedulable) return undefined;
    if (tolerationsTolerateTaint(pod.spec.tolerations, unschedulableTaint)) return undefined;
    return newStatus(Code.UnschedulableAndUnresolvable, ErrReasonUnschedulable);
  }
  // #endregion filter

  eventsToRegister(): ClusterEventWithHint[] {
    return [{ event: { resource: "Node", actionType: ActionType.Add | ActionType.UpdateNodeTaint } }];
  }
}
