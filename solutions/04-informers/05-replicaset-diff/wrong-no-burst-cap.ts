// Mistake: creates the whole shortfall at once, however large. Plausible — that is the diff — but
// `kubectl scale --replicas=10000` then sends 10,000 creates in one sync; upstream caps a sync at
// burstReplicas (500) and lets the next sync do the rest.
import type { Pod } from "../../../code/api/core.ts";
import { isPodActive, sortActivePodsWithRanks } from "../../../code/controllers/active-pods.ts";
import { type ReplicaSetDiff, rankByNode } from "./replicaset-diff.ts";

export function replicaSetDiff(
  pods: readonly Pod[],
  replicas: number,
  _burstReplicas: number,
  now: number,
): ReplicaSetDiff {
  const active = pods.filter(isPodActive);
  const diff = active.length - replicas;
  if (diff < 0) return { create: -diff, delete: [] };
  if (diff === 0) return { create: 0, delete: [] };
  return {
    create: 0,
    delete: sortActivePodsWithRanks(rankByNode(active), now)
      .slice(0, diff)
      .map((r) => r.pod),
  };
}
