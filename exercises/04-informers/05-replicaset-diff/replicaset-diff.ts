/**
 * Exercise: the ReplicaSet diff — how many pods to create, or which to delete.
 *
 * Count only active pods; create the shortfall (at most burstReplicas); or delete the surplus
 * (at most burstReplicas), the least useful first: rank each active pod by how many active pods
 * share its node, then sort with sortActivePodsWithRanks. README.md has the rules.
 */
import type { Pod } from "../../../code/api/core.ts";
import {
  isPodActive,
  type RankedPod,
  sortActivePodsWithRanks,
} from "../../../code/controllers/active-pods.ts";

export interface ReplicaSetDiff {
  /** How many pods to create. */
  create: number;
  /** The pods to delete, in the order chosen. */
  delete: Pod[];
}

export function replicaSetDiff(
  pods: readonly Pod[],
  replicas: number,
  burstReplicas: number,
  now: number,
): ReplicaSetDiff {
  const unused: [typeof isPodActive, RankedPod[], typeof sortActivePodsWithRanks] = [
    isPodActive,
    [],
    sortActivePodsWithRanks,
  ];
  throw new Error(
    `TODO: replicaSetDiff(${pods.length} pods, replicas ${replicas}, burst ${burstReplicas}, now ${now}) ${unused.length}`,
  );
}
