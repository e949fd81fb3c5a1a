/**
 * NodePorts — Filter: the host ports a pod asks for must be free on the node.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeports/node_ports.go (NodePorts, getContainerPorts, PreFilter, Filter, Fits, fitsPorts, EventsToRegister, isSchedulableAfterPodDeleted, ErrReason)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/types.go (HostPortInfo.CheckConflict)
 * @chapter 05-scheduler
 *
 * Solves: a `hostPort` binds a port on the node's own network; two pods asking for TCP 8080 on
 * one node would have the second fail at container start, after it was bound. Checking here
 * turns a crash loop on the node into "pending, no node has the port free".
 *
 * Invariants:
 * - only ports with hostPort > 0 count; a pod without any is Skip at PreFilter.
 * - a conflict is the same protocol and port on the same host IP, where 0.0.0.0 (or an empty
 *   hostIP) overlaps every IP — NodeInfo.usedPorts' HostPortInfo.checkConflict.
 * - a rejection is Unschedulable (evicting the pod that holds the port would free it), with
 *   "node(s) didn't have free ports for the requested pod ports".
 * - queueing: a deleted pod frees ports only if it was on (or nominated to) a node and held a
 *   port that conflicts with this pod's; pod updates are ignored (ports are immutable).
 */
import type { ContainerPort, Pod } from "../../../api/core.ts";
import type { CycleState, StateData } from "../../framework/cycle-state.ts";
import { NotFoundError } from "../../framework/cycle-state.ts";
import { ActionType, type ClusterEventWithHint, QueueingHint } from "../../framework/events.ts";
import type {
  EnqueueExtensions,
  FilterPlugin,
  PreFilterPlugin,
  PreFilterResult,
} from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { asStatus, Code, newStatus, type Status } from "../../framework/status.ts";
import { HostPortInfo } from "../../framework/types.ts";

export const Name = "NodePorts";
export const ErrReason = "node(s) didn't have free ports for the requested pod ports";
const preFilterStateKey = `PreFilter${Name}`;

class PreFilterState implements StateData {
  constructor(readonly ports: ContainerPort[]) {}
  /** The pod's own ports: other pods coming and going do not change them. */
  clone(): StateData {
    return this;
  }
}

// #region ports
/** getContainerPorts: the ports of the pod's (regular) containers that name a host port. */
export function getContainerPorts(...pods: Pod[]): ContainerPort[] {
  const ports: ContainerPort[] = [];
  for (const pod of pods) {
    for (const c of pod.spec.containers ?? []) {
      for (const p of c.ports ?? []) if ((p.hostPort ?? 0) > 0) ports.push(p);
    }
  }
  return ports;
}

export function fitsPorts(wantPorts: readonly ContainerPort[], usedPorts: HostPortInfo): boolean {
  return !wantPorts.some((p) => usedPorts.checkConflict(p.hostIP, p.protocol, p.hostPort ?? 0));
}

/** Fits: does the pod's set of host ports fit the node? (Preemption and the hint reuse it.) */
export function fits(pod: Pod, nodeInfo: NodeInfo): boolean {
  return fitsPorts(getContainerPorts(pod), nodeInfo.usedPorts);
}
// #endregion ports

export class NodePorts implements PreFilterPlugin, FilterPlugin, EnqueueExtensions {
  name(): string {
    return Name;
  }

  // #region filter
  preFilter(state: CycleState, pod: Pod): [PreFilterResult | undefined, Status | undefined] {
    const ports = getContainerPorts(pod);
    if (ports.length === 0) return [undefined, newStatus(Code.Skip)];
    state.write(preFilterStateKey, new PreFilterState(ports));
    return [undefined, undefined];
  }

  preFilterExtensions(): undefined {
    return undefined;
  }

  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const s = state.read(preFilterStateKey);
    if (s instanceof NotFoundError) {
      return asStatus(new Error(`reading "${preFilterStateKey}" from cycleState: ${s.message}`));
    }
    if (!fitsPorts((s as PreFilterState).ports, nodeInfo.usedPorts)) {
      return newStatus(Code.Unschedulable, ErrReason);
    }
    return undefined;
  }
  // #endregion filter

  // #region events
  /**
   * Pod delete (with a hint) and node add. Upstream also registers node label and taint
   * updates when queueing hints are off (the pre-check may hide a node add); with hints on,
   * the 1.32 default, node add alone.
   */
  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        event: { resource: "Pod", actionType: ActionType.Delete },
        queueingHintFn: (pod, oldObj) => this.isSchedulableAfterPodDeleted(pod, oldObj),
      },
      { event: { resource: "Node", actionType: ActionType.Add } },
    ];
  }

  isSchedulableAfterPodDeleted(pod: Pod, oldObj: unknown): QueueingHint | Error {
    const deleted = oldObj as Pod | undefined;
    if (!deleted?.spec) return new Error(`expected a Pod, got ${typeof oldObj}`);
    // A pod that never held a node held no ports.
    if (!deleted.spec.nodeName && !deleted.status?.nominatedNodeName) return QueueingHint.QueueSkip;
    const used = new HostPortInfo();
    for (const p of getContainerPorts(deleted)) used.add(p.hostIP, p.protocol, p.hostPort ?? 0);
    if (used.len() === 0) return QueueingHint.QueueSkip;
    // If the pod would fit beside the deleted pod alone, that pod was not what blocked it.
    return fitsPorts(getContainerPorts(pod), used) ? QueueingHint.QueueSkip : QueueingHint.Queue;
  }
  // #endregion events
}
