// Mistake: every condition is compared, not only the kubelet's. Plausible: a condition is part of
// the status like any field. But other writers own theirs (a controller's readiness gate, a
// chaos tool's marker): the kubelet never writes them (the merge takes the server's), so a
// difference there is no reason to act — with this version every such condition on the server
// makes the periodic batch "reconcile" the pod every 10 s, a request per pod for nothing.
import type { PodCondition, PodStatus } from "../../../code/api/core.ts";
import { semanticEqual } from "../../../code/kubelet/status/patch-pod-status.ts";

function byType(status: PodStatus): Map<string, PodCondition> {
  return new Map((status.conditions ?? []).map((c) => [c.type, c] as const));
}

export function isPodStatusByKubeletEqual(oldStatus: PodStatus, status: PodStatus): boolean {
  const oldConditions = byType(oldStatus);
  const newConditions = byType(status);
  if (oldConditions.size !== newConditions.size) return false;
  for (const [type, c] of newConditions) {
    const o = oldConditions.get(type);
    if (!o || o.status !== c.status || o.reason !== c.reason || o.message !== c.message) return false;
  }
  return semanticEqual({ ...oldStatus, conditions: undefined }, { ...status, conditions: undefined });
}
