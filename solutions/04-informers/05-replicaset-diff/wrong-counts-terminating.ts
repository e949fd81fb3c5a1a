// Mistake: counts every pod it is given, terminating and finished ones too. Plausible because the
// pods are all "ours" (they carry our controllerRef); but a pod with a deletionTimestamp or in
// phase Failed serves nobody, and the ReplicaSet stays short until it is gone.
import type { Pod } from "../../../code/api/core.ts";
import { sortActivePodsWithRanks } from "../../../code/controllers/active-pods.ts";
import { type ReplicaSetDiff, rankByNode } from "./replicaset-diff.ts";

export function replicaSetDiff(
  pods: readonly Pod[],
  replicas: number,
  burstReplicas: number,
  now: number,
): ReplicaSetDiff {
  const diff = pods.length - replicas;
  if (diff < 0) return { create: Math.min(-diff, burstReplicas), delete: [] };
  if (diff === 0) return { create: 0, delete: [] };
  const n = Math.min(diff, burstReplicas);
  return {
    create: 0,
    delete: sortActivePodsWithRanks(rankByNode(pods), now)
      .slice(0, n)
      .map((r) => r.pod),
  };
}
