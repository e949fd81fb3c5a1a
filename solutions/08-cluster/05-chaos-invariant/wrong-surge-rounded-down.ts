// Mistake: a percentage maxSurge is rounded down, as maxUnavailable is. 25% of 3 replicas is
// 0.75: the controller rounds it UP to 1 (it may ask for 4 pods), this invariant down to 0 (it
// allows 3) — off by one, and the default rollout of every small Deployment is a FAIL.
import type { Deployment, ReplicaSet } from "../../../code/api/apps.ts";
import type { Pod } from "../../../code/api/core.ts";
import type { InvariantResult } from "../../../code/cmd/cluster/chaos/invariants.ts";

type EventType = "ADDED" | "MODIFIED" | "DELETED";

export type Observation =
  | { at: number; type: EventType; kind: "Deployment"; object: Deployment }
  | { at: number; type: EventType; kind: "ReplicaSet"; object: ReplicaSet }
  | { at: number; type: EventType; kind: "Pod"; object: Pod };

/** maxSurge as a pod count: an int as is, a percentage of replicas rounded up. */
function resolveMaxSurge(d: Deployment): number {
  if ((d.spec.strategy?.type ?? "RollingUpdate") !== "RollingUpdate") return 0;
  const v = d.spec.strategy?.rollingUpdate?.maxSurge ?? "25%";
  if (typeof v === "number") return v;
  const percent = Number(v.replace(/%$/, ""));
  return Math.floor((percent * (d.spec.replicas ?? 1)) / 100);
}

/** The ReplicaSet's controller is the Deployment (its uid, not only its name: names are reused). */
const controlledBy = (rs: ReplicaSet, d: Deployment) =>
  rs.metadata.ownerReferences?.some((r) => r.controller && r.uid === d.metadata.uid) ?? false;

export function neverAboveMaxSurge(name: string, observations: Observation[]): InvariantResult {
  const title = `deployment ${name}'s ReplicaSets never asked for more than replicas + maxSurge pods`;
  const evidence: string[] = [];
  const replicaSets = new Map<string, ReplicaSet>();
  let deployment: Deployment | undefined;
  let deploymentSeen = false;
  let replicaSetsSeen = false;
  let peak = 0;
  for (const o of observations) {
    if (o.kind === "Deployment") {
      if (o.object.metadata.name !== name) continue;
      deployment = o.type === "DELETED" ? undefined : o.object;
      deploymentSeen = true;
    } else if (o.kind === "ReplicaSet") {
      const uid = o.object.metadata.uid ?? "";
      if (o.type === "DELETED") replicaSets.delete(uid);
      else replicaSets.set(uid, o.object);
    } else continue; // pods follow the ReplicaSets, late: the promise is about what is asked for
    if (!deployment) continue;
    const d = deployment;
    const mine = [...replicaSets.values()].filter((rs) => controlledBy(rs, d));
    if (mine.length > 0) replicaSetsSeen = true;
    const total = mine.reduce((n, rs) => n + (rs.spec.replicas ?? 1), 0);
    const limit = (d.spec.replicas ?? 1) + resolveMaxSurge(d);
    peak = Math.max(peak, total);
    if (total > limit) {
      const each = mine.map((rs) => `${rs.metadata.name}=${rs.spec.replicas ?? 1}`).join(", ");
      evidence.push(
        `${new Date(o.at).toISOString()}: its ReplicaSets ask for ${total} pods (${each}), more than replicas ${d.spec.replicas ?? 1} + maxSurge ${resolveMaxSurge(d)} = ${limit}`,
      );
    }
  }
  if (!deploymentSeen) evidence.push(`deployment ${name} was never observed: nothing to judge`);
  else if (!replicaSetsSeen)
    evidence.push(`no ReplicaSet of deployment ${name} was observed: nothing to judge`);
  return {
    name: title,
    ok: evidence.length === 0,
    evidence,
    summary: `${observations.length} observations, at most ${peak} pods asked for at once`,
  };
}
