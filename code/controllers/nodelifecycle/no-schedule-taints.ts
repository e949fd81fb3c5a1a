/**
 * Taint nodes by condition — the NoSchedule taints that mirror a Node's conditions, so the
 * scheduler (which reads taints, not conditions) keeps new pods off a node that is not ready,
 * unreachable, under pressure or cordoned.
 * Mirrors kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go
 * (nodeConditionToTaintKeyStatusMap, taintKeyToNodeConditionMap, doNoScheduleTaintingPass) and
 * pkg/util/taints/taints.go (TaintSetDiff, TaintSetFilter).
 *
 * Solves: a pod that tolerates `unreachable:NoExecute` for 300 s (every pod, by
 * DefaultTolerationSeconds) passes the scheduler's taint filter for that taint — without a
 * NoSchedule twin, a ReplicaSet's replacement for an evicted pod could be placed right back on
 * the dead node. `unreachable:NoSchedule` is tolerated by nobody by default.
 *
 * Invariants:
 * - the node's NoSchedule taints with one of these keys are exactly the ones its conditions (and
 *   spec.unschedulable) call for; other NoSchedule taints (a user's) are never touched.
 *
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go (nodeConditionToTaintKeyStatusMap, taintKeyToNodeConditionMap, doNoScheduleTaintingPass)
 * @upstream kubernetes/kubernetes pkg/util/taints/taints.go (TaintSetDiff, TaintSetFilter)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/well_known_taints.go (TaintNodeNotReady, TaintNodeUnreachable, TaintNodeUnschedulable, TaintNodeMemoryPressure, TaintNodeDiskPressure, TaintNodeNetworkUnavailable, TaintNodePIDPressure)
 * @chapter 07-kubelet
 */
import type { Node, Taint } from "../../api/core.ts";

export const TaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

/** Which condition status calls for which taint key. */
export const nodeConditionToTaintKeyStatusMap: Record<string, Record<string, string>> = {
  Ready: { False: "node.kubernetes.io/not-ready", Unknown: "node.kubernetes.io/unreachable" },
  MemoryPressure: { True: "node.kubernetes.io/memory-pressure" },
  DiskPressure: { True: "node.kubernetes.io/disk-pressure" },
  NetworkUnavailable: { True: "node.kubernetes.io/network-unavailable" },
  PIDPressure: { True: "node.kubernetes.io/pid-pressure" },
};

const conditionTaintKeys = new Set(
  Object.values(nodeConditionToTaintKeyStatusMap).flatMap((m) => Object.values(m)),
);
const same = (a: Taint, b: Taint) => a.key === b.key && a.effect === b.effect;

// #region no-schedule-taints
/** [taints to add, taints to remove] to bring the node's condition taints in line (doNoScheduleTaintingPass). */
export function noScheduleTaintDiff(node: Node): [Taint[], Taint[]] {
  const wanted: Taint[] = [];
  for (const c of node.status?.conditions ?? []) {
    const key = nodeConditionToTaintKeyStatusMap[c.type]?.[c.status];
    if (key) wanted.push({ key, effect: "NoSchedule" });
  }
  if (node.spec?.unschedulable) wanted.push({ key: TaintNodeUnschedulable, effect: "NoSchedule" });
  // Only the taints this pass owns are compared; a user's NoSchedule taint is left alone.
  const owned = (node.spec?.taints ?? []).filter(
    (t) => t.effect === "NoSchedule" && (t.key === TaintNodeUnschedulable || conditionTaintKeys.has(t.key)),
  );
  const toAdd = wanted.filter((w) => !owned.some((o) => same(o, w)));
  const toDel = owned.filter((o) => !wanted.some((w) => same(o, w)));
  return [toAdd, toDel];
}
// #endregion no-schedule-taints
