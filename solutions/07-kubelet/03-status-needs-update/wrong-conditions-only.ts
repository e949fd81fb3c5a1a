// Mistake: only the conditions are compared — "the kubelet-owned part" read as "the kubelet's
// conditions". Plausible from the function's name. But the kubelet owns the rest of the status
// too: phase, pod IPs, every container's state, restart count and ready flag. With this version a
// container that restarted while the conditions stayed the same is never reported: `kubectl get
// pods` keeps showing RESTARTS 0.
import type { PodCondition, PodStatus } from "../../../code/api/core.ts";
import {
  podConditionByKubelet,
  podConditionSharedByKubelet,
} from "../../../code/kubelet/status/status-manager.ts";

function kubeletConditions(status: PodStatus): Map<string, PodCondition> {
  const byType = new Map<string, PodCondition>();
  for (const c of status.conditions ?? []) {
    if (podConditionByKubelet(c.type) || podConditionSharedByKubelet(c.type)) byType.set(c.type, c);
  }
  return byType;
}

export function isPodStatusByKubeletEqual(oldStatus: PodStatus, status: PodStatus): boolean {
  const oldConditions = kubeletConditions(oldStatus);
  const newConditions = kubeletConditions(status);
  if (oldConditions.size !== newConditions.size) return false;
  for (const [type, c] of newConditions) {
    const o = oldConditions.get(type);
    if (!o || o.status !== c.status || o.reason !== c.reason || o.message !== c.message) return false;
  }
  return true;
}
