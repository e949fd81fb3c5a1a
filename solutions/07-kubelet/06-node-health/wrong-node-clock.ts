// Mistake: the grace period is measured from the kubelet's own timestamps (the newest of
// lastHeartbeatTime and the Lease's renewTime) instead of from when the controller noticed them.
// Plausible: the times are right there on the objects. But they come from the node's clock: an
// hour behind, a live node looks dead; an hour ahead, a dead one looks alive for an hour. Upstream
// only compares them with the saved ones and records its own clock's time (probeTimestamp).
import type { Node, NodeCondition } from "../../../code/api/core.ts";
import type {
  GracePeriods,
  NodeHealthData,
  NodeHealthVerdict,
} from "../../../code/controllers/nodelifecycle/node-health.ts";

export function nodeHealthVerdict(
  saved: NodeHealthData | undefined,
  node: Node,
  leaseRenewTime: number | undefined,
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

  // The Lease: a renewTime we have not seen before is a heartbeat too.
  if (
    leaseRenewTime !== undefined &&
    (saved?.leaseRenewTime === undefined || leaseRenewTime > saved.leaseRenewTime)
  ) {
    health.leaseRenewTime = leaseRenewTime;
    health.probeTimestamp = now;
    why = "Lease renewed";
  }

  const heartbeat = Date.parse(observedReadyCondition.lastHeartbeatTime ?? "") || 0;
  const lastSignOfLife = Math.max(heartbeat, leaseRenewTime ?? 0);
  const overdue = now > lastSignOfLife + gracePeriodMs;
  if (overdue)
    why = `no heartbeat for ${(now - health.probeTimestamp) / 1000}s, grace period ${gracePeriodMs / 1000}s`;
  return { health, observedReadyCondition, gracePeriodMs, overdue, why };
}
