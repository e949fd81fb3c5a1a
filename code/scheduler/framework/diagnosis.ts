/**
 * Diagnosis — why a pod fits nowhere: each rejected node's Status (NodeToStatus), the plugins
 * that rejected it, and FitError, which turns them into FailedScheduling's message.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/types.go (NodeToStatus, NewDefaultNodeToStatus, Diagnosis, AddPluginStatus, FitError, FitError.Error, NoNodeAvailableMsg, SeparatorFormat)
 * @chapter 05-scheduler
 *
 * Solves: the user sees one line per attempt — "0/3 nodes are available: 1 Insufficient cpu, 2
 * node(s) had untolerated taint {…}." — and preemption needs the same facts node by node (which
 * nodes a pod's eviction could help). One structure serves both.
 *
 * Invariants:
 * - a node absent from the explicit map has `absentNodesStatus` (UnschedulableAndUnresolvable
 *   by default): nodes a PreFilter ruled out, or nodes never evaluated, are not preemption
 *   candidates; `len()` counts explicit entries only.
 * - the message counts each reason once per node and sorts "count reason" strings as strings
 *   (upstream's sort.Strings: "10 x" sorts before "2 y").
 * - when PreFilter rejected the pod, its message replaces the per-node counts (every node has
 *   the same status; counting them would repeat it).
 */
import type { Pod } from "../../api/core.ts";
import { Code, isRejected, newStatus, type Status } from "./status.ts";

// #region node-to-status
export class NodeToStatus {
  private readonly nodeToStatus = new Map<string, Status>();
  constructor(private absentNodesStatus: Status = newStatus(Code.UnschedulableAndUnresolvable)) {}

  get(nodeName: string): Status {
    return this.nodeToStatus.get(nodeName) ?? this.absentNodesStatus;
  }

  set(nodeName: string, s: Status): void {
    this.nodeToStatus.set(nodeName, s);
  }

  len(): number {
    return this.nodeToStatus.size;
  }

  absentNodes(): Status {
    return this.absentNodesStatus;
  }

  setAbsentNodesStatus(s: Status): void {
    this.absentNodesStatus = s;
  }

  forEachExplicitNode(fn: (nodeName: string, s: Status) => void): void {
    for (const [n, s] of this.nodeToStatus) fn(n, s);
  }
}
// #endregion node-to-status

export class Diagnosis {
  nodeToStatus = new NodeToStatus();
  /** Plugins that returned Unschedulable(AndUnresolvable): their events may requeue the pod. */
  unschedulablePlugins = new Set<string>();
  pendingPlugins = new Set<string>();
  preFilterMsg = "";
  postFilterMsg = "";

  /** AddPluginStatus: remember which plugin rejected (or parked) the pod. */
  addPluginStatus(s: Status | undefined): void {
    if (!s?.plugin || !isRejected(s)) return;
    if (s.code === Code.Pending) this.pendingPlugins.add(s.plugin);
    else this.unschedulablePlugins.add(s.plugin);
  }
}

// #region fit-error
export const NoNodeAvailableMsg = (n: number) => `0/${n} nodes are available`;

/** FitError: no node fits; its message is the FailedScheduling event's text. */
export class FitError extends Error {
  constructor(
    readonly pod: Pod,
    readonly numAllNodes: number,
    readonly diagnosis: Diagnosis,
  ) {
    // No message argument: Error would define an own `message`, hiding the getter below.
    super();
    this.name = "FitError";
  }

  override get message(): string {
    return fitErrorMessage(this.numAllNodes, this.diagnosis);
  }
}

export function fitErrorMessage(numAllNodes: number, d: Diagnosis): string {
  let msg = `${NoNodeAvailableMsg(numAllNodes)}:`;
  if (d.preFilterMsg !== "") {
    msg += ` ${d.preFilterMsg}.`;
  } else {
    const counts = new Map<string, number>();
    d.nodeToStatus.forEachExplicitNode((_n, s) => {
      for (const r of s.reasons()) counts.set(r, (counts.get(r) ?? 0) + 1);
    });
    // Nodes without an explicit status count with the absent nodes' reasons, as upstream: those a
    // PreFilterResult left out (NodeAffinity's matchFields) and, after preemption, "N Preemption
    // is not helpful for scheduling".
    const absent = numAllNodes - d.nodeToStatus.len();
    if (absent > 0) {
      for (const r of d.nodeToStatus.absentNodes().reasons()) counts.set(r, (counts.get(r) ?? 0) + absent);
    }
    // Go's sort.Strings: byte order of the whole "count reason" string, not by count.
    const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    if (parts.length > 0) msg += ` ${parts.join(", ")}.`;
  }
  if (d.postFilterMsg !== "") msg += ` ${d.postFilterMsg}.`;
  return msg;
}
// #endregion fit-error
