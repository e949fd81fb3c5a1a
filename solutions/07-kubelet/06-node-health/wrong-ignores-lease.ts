// Mistake: only the Node's status counts as a heartbeat; the Lease is ignored.
// Plausible: the Ready condition has a field called lastHeartbeatTime, so that must be the
// heartbeat. Since 1.17 kubelets write their full status only when something changes (or every
// 5 minutes) and renew their Lease in kube-node-lease every 10 s: upstream's tryUpdateNodeHealth
// takes a newer Lease renewTime as a sign of life, and without it every quiet node goes Unknown.
import type { Node, NodeCondition } from "../../../code/api/core.ts";
import type {
  GracePeriods,
  NodeHealthData,
  NodeHealthVerdict,
} from "../../../code/controllers/nodelifecycle/node-health.ts";

export function nodeHealthVerdict(
  saved: NodeHealthData | undefined,
  node: Node,
  _leaseRenewTime: number | undefined,
  now: number,
  grace: GracePeriods,
): NodeHealthVerdict {
  const creation = node.metadata.creationTimestamp;
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  let health: NodeHealthData;
  let observedReadyCondition: NodeCondition;
  let gracePeriodMs: number;
  let why: string;

  if (ready === undefined) {
    // The kubelet never posted status: the longer startup grace, counted from the Node's creation.
    const created = creation ? Date.parse(creation) : Number.NaN;
    observedReadyCondition = {
      type: "Ready",
      status: "Unknown",
      lastHeartbeatTime: creation,
      lastTransitionTime: creation,
    };
    gracePeriodMs = grace.nodeStartupGracePeriodMs;
    health = saved
      ? { ...saved, readyCondition: undefined }
      : { probeTimestamp: created, readyTransitionTimestamp: created };
    why = "no Ready condition yet: startup grace period from the Node's creation";
  } else {
    observedReadyCondition = { ...ready };
    gracePeriodMs = grace.nodeMonitorGracePeriodMs;
    const last = saved?.readyCondition;
    if (last === undefined) {
      health = { probeTimestamp: now, readyTransitionTimestamp: now, leaseRenewTime: saved?.leaseRenewTime };
      why = "first sight of the Ready condition";
    } else if (last.lastHeartbeatTime !== ready.lastHeartbeatTime) {
      // Only that the kubelet's timestamp changed matters, never its value: its clock is not ours.
      health = {
        probeTimestamp: now,
        readyTransitionTimestamp:
          last.lastTransitionTime !== ready.lastTransitionTime ? now : saved!.readyTransitionTimestamp,
        leaseRenewTime: saved?.leaseRenewTime,
      };
      why = "new node status";
    } else {
      health = { ...saved! };
      why = "nothing new in the node status";
    }
    health.readyCondition = ready;
  }

  const overdue = now > health.probeTimestamp + gracePeriodMs;
  if (overdue)
    why = `no heartbeat for ${(now - health.probeTimestamp) / 1000}s, grace period ${gracePeriodMs / 1000}s`;
  return { health, observedReadyCondition, gracePeriodMs, overdue, why };
}
