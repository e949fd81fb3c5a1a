// Exercise 8.5, the reference answer: replay the informers' events; after each one count the
// Deployment's active pods (its selector matches, not terminating, not finished — IsPodActive) and
// compare with spec.replicas + maxSurge (a percentage rounded up, as
// intstr.GetScaledValueFromIntOrPercent(…, true); Recreate: 0). A recording that never showed the
// Deployment, or none of its pods, FAILs: it proves nothing.
import type { Deployment } from "../../../code/api/apps.ts";
import type { Pod } from "../../../code/api/core.ts";
import type { InvariantResult } from "../../../code/cmd/cluster/chaos/invariants.ts";

export type Observation =
  | { at: number; type: "ADDED" | "MODIFIED" | "DELETED"; kind: "Deployment"; object: Deployment }
  | { at: number; type: "ADDED" | "MODIFIED" | "DELETED"; kind: "Pod"; object: Pod };

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
  const title = `deployment ${name} never ran more than replicas + maxSurge pods`;
  const evidence: string[] = [];
  const pods = new Map<string, Pod>();
  let deployment: Deployment | undefined;
  let deploymentSeen = false;
  let podsSeen = 0;
  let peak = 0;
  for (const o of observations) {
    if (o.kind === "Deployment") {
      if (o.object.metadata.name !== name) continue;
      deployment = o.type === "DELETED" ? undefined : o.object;
      deploymentSeen = true;
    } else {
      const uid = o.object.metadata.uid ?? "";
      if (o.type === "DELETED") pods.delete(uid);
      else pods.set(uid, o.object);
    }
    if (!deployment) continue;
    const d = deployment;
    const mine = [...pods.values()].filter((p) => matches(d, p));
    if (mine.length > 0) podsSeen++;
    const active = mine.filter(isActive);
    const limit = (d.spec.replicas ?? 1) + resolveMaxSurge(d);
    peak = Math.max(peak, active.length);
    if (active.length > limit) {
      const names = active.map((p) => p.metadata.name).join(", ");
      evidence.push(
        `${new Date(o.at).toISOString()}: ${active.length} pods not terminating (${names}), more than replicas ${d.spec.replicas ?? 1} + maxSurge ${resolveMaxSurge(d)} = ${limit}`,
      );
    }
  }
  if (!deploymentSeen) evidence.push(`deployment ${name} was never observed: nothing to judge`);
  else if (podsSeen === 0) evidence.push(`no pod of deployment ${name} was observed: nothing to judge`);
  return {
    name: title,
    ok: evidence.length === 0,
    evidence,
    summary: `${observations.length} observations, at most ${peak} pods at once`,
  };
}
