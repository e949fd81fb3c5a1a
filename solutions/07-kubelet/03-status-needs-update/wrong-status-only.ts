// Mistake: a condition counts as changed only when its status flips; reason and message are
// ignored. Plausible: True/False is what a Service or a kubectl wait looks at. But the message is
// what `kubectl describe pod` shows a user: a Ready=False that says "containers with unready
// status: [a b]" after `a` became ready is a lie the kubelet would never correct.
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
    if (oldConditions.get(type)?.status !== c.status) return false;
  }
  return semanticEqual({ ...oldStatus, conditions: undefined }, { ...status, conditions: undefined });
}
