// Mistake: the kubelet's conditions are compared whole, times included. Plausible: "equal means
// equal". But lastProbeTime and lastTransitionTime are bookkeeping, not news: the manager itself
// sets lastTransitionTime from the status, and a copy that differs only in a time (a condition
// read back from the server, a probe time) would cost a write to the API server for nothing.
import type { PodCondition, PodStatus } from "../../../code/api/core.ts";
import { semanticEqual } from "../../../code/kubelet/status/patch-pod-status.ts";
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
    if (!semanticEqual(oldConditions.get(type), c)) return false;
  }
  return semanticEqual({ ...oldStatus, conditions: undefined }, { ...status, conditions: undefined });
}
