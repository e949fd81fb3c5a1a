// Mistake: the pods are counted — the Deployment's pods not terminating and not finished — as the
// words "never more than replicas + maxSurge pods" suggest. But the deployment controller's
// promise is about what it asks for (its ReplicaSets' spec.replicas: upstream's own e2e check sums
// those); the pods follow late, and the ReplicaSet controller's deletion of an old pod and creation
// of a new one race (they are two ReplicaSets' syncs, on several workers). A good rollout shows a
// 5th pod for a moment — and this invariant FAILs it, now and then, on a real cluster.
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
  return Math.ceil((percent * (d.spec.replicas ?? 1)) / 100);
}

const matches = (d: Deployment, p: Pod) =>
  Object.entries(d.spec.selector.matchLabels ?? {}).every(([k, v]) => p.metadata.labels?.[k] === v);

const isActive = (p: Pod) =>
  !p.metadata.deletionTimestamp && p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed";

export function neverAboveMaxSurge(name: string, observations: Observation[]): InvariantResult {
  const title = `deployment ${name}'s ReplicaSets never asked for more than replicas + maxSurge pods`;
  const evidence: string[] = [];
  const pods = new Map<string, Pod>();
  let deployment: Deployment | undefined;
  let deploymentSeen = false;
  let podsSeen = false;
  let peak = 0;
  for (const o of observations) {
    if (o.kind === "Deployment") {
      if (o.object.metadata.name !== name) continue;
      deployment = o.type === "DELETED" ? undefined : o.object;
      deploymentSeen = true;
    } else if (o.kind === "Pod") {
      const uid = o.object.metadata.uid ?? "";
      if (o.type === "DELETED") pods.delete(uid);
      else pods.set(uid, o.object);
    } else continue; // the pods are what runs: count them
    if (!deployment) continue;
    const d = deployment;
    const mine = [...pods.values()].filter((p) => matches(d, p));
    if (mine.length > 0) podsSeen = true;
    const total = mine.filter(isActive).length;
    const limit = (d.spec.replicas ?? 1) + resolveMaxSurge(d);
    peak = Math.max(peak, total);
    if (total > limit) {
      const each = mine
        .filter(isActive)
        .map((p) => p.metadata.name)
        .join(", ");
      evidence.push(
        `${new Date(o.at).toISOString()}: ${total} pods not terminating (${each}), more than replicas ${d.spec.replicas ?? 1} + maxSurge ${resolveMaxSurge(d)} = ${limit}`,
      );
    }
  }
  if (!deploymentSeen) evidence.push(`deployment ${name} was never observed: nothing to judge`);
  else if (!podsSeen) evidence.push(`no pod of deployment ${name} was observed: nothing to judge`);
  return {
    name: title,
    ok: evidence.length === 0,
    evidence,
    summary: `${observations.length} observations, at most ${peak} pods asked for at once`,
  };
}
