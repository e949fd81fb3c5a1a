// Mistake: deletes the newest pods, by creation time alone. Plausible — "last in, first out" is a
// fair rule — but a new pod may be the one that is ready while an old one is still unscheduled;
// scale-down then removes serving pods and keeps useless ones.
import type { Pod } from "../../../code/api/core.ts";
import { isPodActive } from "../../../code/controllers/active-pods.ts";
import type { ReplicaSetDiff } from "./replicaset-diff.ts";

export function replicaSetDiff(
  pods: readonly Pod[],
  replicas: number,
  burstReplicas: number,
  _now: number,
): ReplicaSetDiff {
  const active = pods.filter(isPodActive);
  const diff = active.length - replicas;
  if (diff < 0) return { create: Math.min(-diff, burstReplicas), delete: [] };
  if (diff === 0) return { create: 0, delete: [] };
  const created = (p: Pod) => Date.parse(p.metadata.creationTimestamp ?? "") || 0;
  const newestFirst = [...active].sort((a, b) => created(b) - created(a));
  return { create: 0, delete: newestFirst.slice(0, Math.min(diff, burstReplicas)) };
}
