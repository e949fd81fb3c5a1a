// The reference answer. The course's controller makes the same decision in
// code/controllers/replicaset/replica-set.ts (regions manage-replicas and pods-to-delete), where
// the counts also become expectations and the creates go in slow-start batches.
//
// A recorded mistake next to this file (wrong-*.ts) is this function with one rule done wrong: it
// must fail at least one test.
import type { Pod } from "../../../code/api/core.ts";
import {
  isPodActive,
  type RankedPod,
  sortActivePodsWithRanks,
} from "../../../code/controllers/active-pods.ts";

export interface ReplicaSetDiff {
  create: number;
  delete: Pod[];
}

/** Active pods per node ("" for unscheduled ones): a pod's rank is its node's count. */
export function rankByNode(active: readonly Pod[]): RankedPod[] {
  const onNode = new Map<string, number>();
  for (const p of active) onNode.set(p.spec.nodeName ?? "", (onNode.get(p.spec.nodeName ?? "") ?? 0) + 1);
  return active.map((pod) => ({ pod, rank: onNode.get(pod.spec.nodeName ?? "") ?? 0 }));
}

export function replicaSetDiff(
  pods: readonly Pod[],
  replicas: number,
  burstReplicas: number,
  now: number,
): ReplicaSetDiff {
  const active = pods.filter(isPodActive);
  const diff = active.length - replicas;
  if (diff < 0) return { create: Math.min(-diff, burstReplicas), delete: [] };
  if (diff === 0) return { create: 0, delete: [] };
  const n = Math.min(diff, burstReplicas);
  return {
    create: 0,
    delete: sortActivePodsWithRanks(rankByNode(active), now)
      .slice(0, n)
      .map((r) => r.pod),
  };
}
