// Mistake: a recording that never showed the Deployment (or none of its pods) is a PASS, since
// "nothing exceeded the limit". A typo in the name, an observer whose watch was lost, a namespace
// mix-up — each turns the check into a green run that judged nothing.
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
  let peak = 0;
  for (const o of observations) {
    if (o.kind === "Deployment") {
      if (o.object.metadata.name !== name) continue;
      deployment = o.type === "DELETED" ? undefined : o.object;
    } else {
      const uid = o.object.metadata.uid ?? "";
      if (o.type === "DELETED") pods.delete(uid);
      else pods.set(uid, o.object);
    }
    if (!deployment) continue;
    const d = deployment;
    const mine = [...pods.values()].filter((p) => matches(d, p));
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
  // Nothing above the limit was seen: a pass.
  return {
    name: title,
    ok: evidence.length === 0,
    evidence,
    summary: `${observations.length} observations, at most ${peak} pods at once`,
  };
}
