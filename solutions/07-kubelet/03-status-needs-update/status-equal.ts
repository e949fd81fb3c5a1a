/**
 * Solution: the status manager's "only write on change".
 */
import type { PodCondition, PodStatus } from "../../../code/api/core.ts";
import { semanticEqual } from "../../../code/kubelet/status/patch-pod-status.ts";
import {
  podConditionByKubelet,
  podConditionSharedByKubelet,
} from "../../../code/kubelet/status/status-manager.ts";

/** The conditions the kubelet owns or shares, by type (their order does not matter). */
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
    // Status, reason and message — not the times: those follow from the status.
    if (!o || o.status !== c.status || o.reason !== c.reason || o.message !== c.message) return false;
  }
  // Everything else is compared whole; other writers' conditions are not the kubelet's concern.
  return semanticEqual({ ...oldStatus, conditions: undefined }, { ...status, conditions: undefined });
}
