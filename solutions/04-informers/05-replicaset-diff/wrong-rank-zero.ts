// Mistake: gives every pod rank 0. Plausible — the ranking function sorts well without it — but
// then two replicas doubled up on one node are not preferred for deletion over a pod alone on its
// node, and one node failure later takes both.
import type { Pod } from "../../../code/api/core.ts";
import { isPodActive, sortActivePodsWithRanks } from "../../../code/controllers/active-pods.ts";
import type { ReplicaSetDiff } from "./replicaset-diff.ts";

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
  const ranked = active.map((pod) => ({ pod, rank: 0 }));
  return {
    create: 0,
    delete: sortActivePodsWithRanks(ranked, now)
      .slice(0, Math.min(diff, burstReplicas))
      .map((r) => r.pod),
  };
}
