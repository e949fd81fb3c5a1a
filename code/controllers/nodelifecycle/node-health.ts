/**
 * The node-health decision — has this node's kubelet shown a sign of life recently enough? A
 * pure function of what the controller saw last time, what it sees now (the Node's Ready
 * condition, the node's Lease) and the clock, so it can be read, tested and rebuilt alone.
 * Mirrors kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go
 * (nodeHealthData, tryUpdateNodeHealth's bookkeeping and its grace-period test).
 *
 * Solves:
 * - a kubelet proves it is alive two ways: a new `lastHeartbeatTime` on its Ready condition
 *   (a full status write, every few minutes when nothing changes) and a renewed Lease in
 *   `kube-node-lease` (a tiny write every 10 s). Either one counts;
 * - clocks differ between machines: the controller never compares the kubelet's timestamps with
 *   its own clock. It only notices that a timestamp *changed* and writes down *its own* time of
 *   noticing (`probeTimestamp`); the grace period runs from there;
 * - a node that registered but never posted status gets the (longer) startup grace period,
 *   counted from the Node's creationTimestamp.
 *
 * Invariants:
 * - probeTimestamp only moves forward to `now`, when the Ready condition's lastHeartbeatTime or
 *   the Lease's renewTime differs from the saved one (or the node is seen for the first time);
 * - readyTransitionTimestamp moves to `now` when the Ready condition's lastTransitionTime changed;
 * - the node is overdue when now > probeTimestamp + gracePeriod, where gracePeriod is the
 *   startup grace period if the Node has no Ready condition and the monitor grace period if it has.
 *
 * What upstream does differently: a controller that starts (or restarts) sees every Lease for the
 * first time and so gives every node a fresh grace period — upstream does exactly that too; we
 * note it because it surprises: a node dead before the controller started is found dead one
 * grace period after the start, not at once. One real difference: when a new status arrives,
 * upstream rebuilds its nodeHealthData without the saved Lease, so the next pass takes the same
 * Lease for a new one and moves probeTimestamp once more (one --node-monitor-period of extra
 * grace after a status write); we keep the saved renewTime, so only a real renewal counts.
 *
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go (nodeHealthData, tryUpdateNodeHealth)
 * @chapter 07-kubelet
 */
import type { Node, NodeCondition } from "../../api/core.ts";

/** What the controller remembers of a node between two passes (nodeHealthData). */
export interface NodeHealthData {
  /** When the controller last saw a sign of life, on the controller's clock (ms). */
  probeTimestamp: number;
  /** When the controller saw the Ready condition change, on its clock (ms). */
  readyTransitionTimestamp: number;
  /** The Ready condition as last seen (undefined: the Node had none). */
  readyCondition?: NodeCondition;
  /** The Lease's spec.renewTime as last seen (ms), undefined if no Lease was seen. */
  leaseRenewTime?: number;
}

export interface GracePeriods {
  /** --node-monitor-grace-period */
  nodeMonitorGracePeriodMs: number;
  /** --node-startup-grace-period */
  nodeStartupGracePeriodMs: number;
}

export interface NodeHealthVerdict {
  /** What to remember for the next pass. */
  health: NodeHealthData;
  /** The Ready condition as posted (a stand-in with status Unknown when the Node has none). */
  observedReadyCondition: NodeCondition;
  gracePeriodMs: number;
  /** True: no sign of life within the grace period — the node must be marked Unknown. */
  overdue: boolean;
  /** Why, in words (for logs and for learners). */
  why: string;
}

export const getNodeCondition = (node: Node, type: string): NodeCondition | undefined =>
  node.status?.conditions?.find((c) => c.type === type);

const ms = (t: string | undefined) => (t ? Date.parse(t) : Number.NaN);

// #region node-health
/**
 * One node's health at `now`: `saved` is what the previous pass remembered (undefined the first
 * time), `leaseRenewTime` the renewTime of the node's Lease (ms) if there is one.
 */
export function nodeHealthVerdict(
  saved: NodeHealthData | undefined,
  node: Node,
  leaseRenewTime: number | undefined,
  now: number,
  grace: GracePeriods,
): NodeHealthVerdict {
  const created = ms(node.metadata.creationTimestamp);
  const current = getNodeCondition(node, "Ready");
  let health: NodeHealthData;
  let observedReadyCondition: NodeCondition;
  let gracePeriodMs: number;
  let why: string;
  if (!current) {
    // Never posted status: a stand-in Unknown condition, and the startup grace from creation.
    observedReadyCondition = {
      type: "Ready",
      status: "Unknown",
      lastHeartbeatTime: node.metadata.creationTimestamp,
      lastTransitionTime: node.metadata.creationTimestamp,
    };
    gracePeriodMs = grace.nodeStartupGracePeriodMs;
    health = saved
      ? { ...saved, readyCondition: undefined }
      : { probeTimestamp: created, readyTransitionTimestamp: created };
    why = "the kubelet never posted a Ready condition (startup grace period, from the Node's creation)";
  } else {
    observedReadyCondition = { ...current };
    gracePeriodMs = grace.nodeMonitorGracePeriodMs;
    if (!saved?.readyCondition) {
      // First sight of this node (or of its Ready condition): count from now.
      health = { probeTimestamp: now, readyTransitionTimestamp: now, leaseRenewTime: saved?.leaseRenewTime };
      why = "first time the controller sees this node's Ready condition";
    } else if (saved.readyCondition.lastHeartbeatTime !== current.lastHeartbeatTime) {
      // The kubelet posted status since the last pass.
      const transitioned = saved.readyCondition.lastTransitionTime !== current.lastTransitionTime;
      health = {
        probeTimestamp: now,
        readyTransitionTimestamp: transitioned ? now : saved.readyTransitionTimestamp,
        readyCondition: current,
        leaseRenewTime: saved.leaseRenewTime,
      };
      why = "the kubelet posted node status (a new lastHeartbeatTime)";
    } else {
      health = { ...saved };
      why = "no new node status since the last pass";
    }
    health.readyCondition = current;
  }
  // A renewed Lease is a heartbeat too — the cheap one kubelets send every 10 s.
  if (
    leaseRenewTime !== undefined &&
    (saved?.leaseRenewTime === undefined || saved.leaseRenewTime < leaseRenewTime)
  ) {
    health.leaseRenewTime = leaseRenewTime;
    health.probeTimestamp = now;
    why = "the kubelet renewed its Lease";
  }
  const overdue = now > health.probeTimestamp + gracePeriodMs;
  if (overdue)
    why = `no status update or Lease renewal seen for ${Math.round((now - health.probeTimestamp) / 1000)}s (grace period ${gracePeriodMs / 1000}s)`;
  return { health, observedReadyCondition, gracePeriodMs, overdue, why };
}
// #endregion node-health

/** The conditions the controller turns Unknown when a node is overdue (not NetworkUnavailable). */
export const nodeConditionTypes = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"] as const;

// #region mark-unknown
/**
 * The Node's conditions once it is overdue: Ready and the pressure conditions Unknown, with
 * upstream's reasons; a condition the kubelet never posted is added as "NodeStatusNeverUpdated".
 */
export function conditionsWhenOverdue(node: Node, nowIso: string): NodeCondition[] {
  const conditions = (node.status?.conditions ?? []).map((c) => ({ ...c }));
  for (const type of nodeConditionTypes) {
    const c = conditions.find((x) => x.type === type);
    if (!c) {
      conditions.push({
        type,
        status: "Unknown",
        reason: "NodeStatusNeverUpdated",
        message: "Kubelet never posted node status.",
        lastHeartbeatTime: node.metadata.creationTimestamp,
        lastTransitionTime: nowIso,
      });
    } else if (c.status !== "Unknown") {
      c.status = "Unknown";
      c.reason = "NodeStatusUnknown";
      c.message = "Kubelet stopped posting node status.";
      c.lastTransitionTime = nowIso;
    }
  }
  return conditions;
}
// #endregion mark-unknown
