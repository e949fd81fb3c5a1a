// Mistake: the kubelet's conditions are compared pairwise, in list order. Plausible: the kubelet
// generates them in a fixed order. But not every path does — a readiness verdict rebuilds Ready
// and ContainersReady at the end of the list, the next sync puts them back in the middle — and the
// order carries no meaning (conditions merge by type). With this version every probe verdict is
// followed by a second write that only reorders the list.
import type { PodCondition, PodStatus } from "../../../code/api/core.ts";
import { semanticEqual } from "../../../code/kubelet/status/patch-pod-status.ts";
import {
  podConditionByKubelet,
  podConditionSharedByKubelet,
} from "../../../code/kubelet/status/status-manager.ts";

function kubeletConditions(status: PodStatus): PodCondition[] {
  return (status.conditions ?? []).filter(
    (c) => podConditionByKubelet(c.type) || podConditionSharedByKubelet(c.type),
  );
}

export function isPodStatusByKubeletEqual(oldStatus: PodStatus, status: PodStatus): boolean {
  const oldConditions = kubeletConditions(oldStatus);
  const newConditions = kubeletConditions(status);
  if (oldConditions.length !== newConditions.length) return false;
  for (let i = 0; i < newConditions.length; i++) {
    const o = oldConditions[i];
    const c = newConditions[i];
    if (o.type !== c.type || o.status !== c.status || o.reason !== c.reason || o.message !== c.message)
      return false;
  }
  return semanticEqual({ ...oldStatus, conditions: undefined }, { ...status, conditions: undefined });
}
