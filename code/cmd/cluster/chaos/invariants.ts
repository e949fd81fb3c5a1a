/**
 * The chaos invariants — pure functions from what the observers recorded (and a fresh look at the
 * cluster once the faults stopped) to PASS or FAIL with the evidence. They hold however the
 * faults fell, so a FAIL is a bug in a component, never bad luck.
 * No upstream counterpart: upstream's disruption tests check one property each (e.g. restart.go:
 * every node and every kube-system pod comes back Ready); Jepsen's checkers are the model for
 * judging a history after the fact.
 *
 * The six, each a function:
 * - `deploymentsConverged`: every Deployment reached the replicas the workload last asked for,
 *   all of them updated to its last template and available, no old one left;
 * - `noPodOnTwoNodes`: a pod (by uid) is bound to one node for its whole life, and its
 *   containers run on that node's kubelet only;
 * - `neverTwoLeadersActing`: from the audit log (chapter 6's witness: who held the Lease when,
 *   who wrote), no renewal over another's takeover, no pod bound twice, and no leader write —
 *   binding, ReplicaSet or pod create — by a process outside its term beyond the stale bound
 *   (client-go's leader election is not fencing: a leader that wakes from a stop may act until
 *   its renew deadline) — the controller-manager's writes made as its controllers' ServiceAccounts
 *   (`--use-service-account-credentials`) name no process, so they only need *a* term to cover
 *   them; without an audit log, from the Leases alone: no takeover before the
 *   previous holder's lease ran out;
 * - `noAcknowledgedWriteLost`: every write that got a 2xx is still there, or superseded by a
 *   later write of the same object (acknowledged, or of unknown outcome);
 * - `cachesMatchFreshList`: each observer informer's store equals a fresh LIST (uid +
 *   resourceVersion per key);
 * - `noOrphanProcess`: every live container process belongs to a pod the API server knows, and
 *   no component process outlives the cluster's stop.
 *
 * @upstream none — test tooling (kubernetes/kubernetes test/e2e/cloud/gcp/restart.go: the after-disruption checks; test/e2e/chaosmonkey/chaosmonkey.go)
 * @chapter 08-cluster
 */
import type { Deployment } from "../../../api/apps.ts";
import type { Event as AuditEvent } from "../../../apiserver/audit/event.ts";
import { type Term, witness } from "../../testing/leader-witness.ts";

export interface InvariantResult {
  name: string;
  ok: boolean;
  /** Why it failed, one line per finding (empty on PASS); on PASS a summary line may follow. */
  evidence: string[];
  summary?: string;
}

const result = (name: string, evidence: string[], summary?: string): InvariantResult => ({
  name,
  ok: evidence.length === 0,
  evidence,
  summary,
});

// #region deployments-converged
export interface DesiredDeployment {
  name: string;
  replicas: number;
}

export function deploymentsConverged(actual: Deployment[], desired: DesiredDeployment[]): InvariantResult {
  const ev: string[] = [];
  const byName = new Map(actual.map((d) => [d.metadata.name ?? "", d]));
  for (const want of desired) {
    const d = byName.get(want.name);
    if (!d) {
      ev.push(`deployment ${want.name} is missing`);
      continue;
    }
    const s = d.status ?? {};
    const gen = d.metadata.generation ?? 0;
    const problems: string[] = [];
    if (d.spec.replicas !== want.replicas) problems.push(`spec.replicas=${d.spec.replicas}`);
    if ((s.observedGeneration ?? 0) < gen)
      problems.push(`observedGeneration=${s.observedGeneration} < ${gen}`);
    for (const field of ["replicas", "updatedReplicas", "availableReplicas", "readyReplicas"] as const)
      if ((s[field] ?? 0) !== want.replicas) problems.push(`${field}=${s[field] ?? 0}`);
    if (problems.length)
      ev.push(`deployment ${want.name}: want ${want.replicas} replicas, ${problems.join(", ")}`);
  }
  return result("every Deployment converges to its desired replicas", ev, `${desired.length} deployments`);
}
// #endregion deployments-converged

// #region no-pod-on-two-nodes
/** A pod seen on a node: bound to it in the API (`api`), or a running container of it in a kubelet's records (`kubelet`). */
export interface PodSighting {
  uid: string;
  pod: string;
  node: string;
  at: number;
  source: "api" | "kubelet";
}

export function noPodOnTwoNodes(sightings: PodSighting[]): InvariantResult {
  const nodes = new Map<string, Map<string, PodSighting>>();
  for (const s of sightings) {
    const m = nodes.get(s.uid) ?? new Map<string, PodSighting>();
    if (!m.has(s.node)) m.set(s.node, s);
    nodes.set(s.uid, m);
  }
  const ev: string[] = [];
  for (const [uid, m] of nodes) {
    if (m.size < 2) continue;
    const seen = [...m.values()].map((s) => `${s.node} (${s.source}, at ${new Date(s.at).toISOString()})`);
    ev.push(`pod ${[...m.values()][0].pod} uid ${uid} on ${seen.join(" and ")}`);
  }
  return result("no pod ever ran on two nodes", ev, `${nodes.size} pods seen`);
}
// #endregion no-pod-on-two-nodes

// #region never-two-leaders
/** One observed version of a leader-election Lease. */
export interface LeaseObservation {
  lease: string;
  holder: string;
  acquireTime?: number;
  renewTime?: number;
  leaseDurationMs: number;
  transitions: number;
}

export interface LeaderHistory {
  /** kube-system Lease names: "kube-scheduler", "kube-controller-manager". */
  leases: string[];
  /** The audit log's ResponseComplete events, in log order (absent: judge the Leases only). */
  audit?: AuditEvent[];
  /** Every observed Lease version, in observation order. */
  observations: LeaseObservation[];
  /** When a process could first notice it lost the lease: SIGCONTs, healed partitions (ms). */
  wakes: number[];
  /** How long a woken leader may still act: renewDeadline + retryPeriod + the client timeout + slack. */
  staleBoundMs: number;
}

/** The controller-manager's controllers' ServiceAccounts (system:serviceaccount:kube-system:<controller>). */
const controllerAccount = "system:serviceaccount:kube-system:";

/** Writes only a leader makes, by Lease: the scheduler binds, the controller-manager creates ReplicaSets and pods. */
const leaderWrite: Record<string, (e: AuditEvent) => boolean> = {
  "kube-scheduler": (e) => e.objectRef?.resource === "pods" && e.objectRef.subresource === "binding",
  "kube-controller-manager": (e) =>
    e.verb === "create" &&
    !e.objectRef?.subresource &&
    (e.objectRef?.resource === "replicasets" || e.objectRef?.resource === "pods"),
};

export function neverTwoLeadersActing(h: LeaderHistory): InvariantResult {
  const ev: string[] = [];
  let summary = "";
  if (h.audit) {
    for (const lease of h.leases) {
      const w = witness(h.audit, lease);
      for (const v of w.fencingViolations) ev.push(`${lease}: ${v}`);
      for (const p of w.doubleBound) ev.push(`${lease}: pod ${p} bound twice`);
      const isLeaderWrite = leaderWrite[lease] ?? (() => false);
      let writes = 0;
      for (const e of h.audit) {
        if (e.stage !== "ResponseComplete" || !isLeaderWrite(e)) continue;
        const code = e.responseStatus?.code ?? 0;
        if (code < 200 || code >= 300) continue;
        const uid = e.user.uid ?? e.user.username ?? "";
        const at = Date.parse(e.stageTimestamp);
        let stale: number | undefined;
        if (e.user.username === `system:${lease}`) {
          // The component's own user: the write is its process's, judged against that process's terms.
          stale = staleness(w.terms, uid, at, h.wakes);
        } else if (lease === "kube-controller-manager" && e.user.username?.startsWith(controllerAccount)) {
          // --use-service-account-credentials: each controller writes as its ServiceAccount,
          // shared by every controller-manager process (as upstream's), so the write cannot be
          // pinned on one process — only on *some* leader: then somebody's term must cover it.
          stale = Math.min(
            ...[...new Set(w.terms.map((t) => t.uid))].map(
              (u) => staleness(w.terms, u, at, h.wakes) ?? Infinity,
            ),
          );
          if (stale === Infinity) stale = undefined;
        } else continue; // an admin's or another component's write is no leader write
        writes++;
        if (stale === undefined)
          ev.push(`${lease}: ${uid} wrote ${describe(e)} at ${e.stageTimestamp} without ever leading`);
        else if (stale > h.staleBoundMs)
          ev.push(
            `${lease}: ${uid} wrote ${describe(e)} at ${e.stageTimestamp}, ${stale} ms after its term ended and it could know (bound ${h.staleBoundMs} ms)`,
          );
      }
      summary += `${lease}: ${w.terms.length} terms, ${writes} leader writes; `;
    }
  } else {
    // The Leases alone: a takeover (a new holder) must come after the old holder's lease ran out.
    // A release (holder "") lets the next one in at once.
    const last = new Map<string, LeaseObservation>();
    for (const o of h.observations) {
      const prev = last.get(o.lease);
      last.set(o.lease, o);
      if (!prev || prev.holder === "" || o.holder === "" || o.holder === prev.holder) continue;
      const expiry = (prev.renewTime ?? 0) + prev.leaseDurationMs;
      if (o.acquireTime !== undefined && o.acquireTime < expiry)
        ev.push(
          `${o.lease}: ${o.holder} acquired at ${new Date(o.acquireTime).toISOString()}, before ${prev.holder}'s lease ran out at ${new Date(expiry).toISOString()}`,
        );
    }
    summary = `${h.observations.length} Lease versions observed (no audit log)`;
  }
  return result("never two leaders acting", ev, summary.trim());
}

/**
 * 0 if `uid` held the Lease at `at`; else ms since it could have known it no longer did (the later
 * of its last term's end and the last wake before `at`); undefined if it never held it before `at`.
 */
function staleness(terms: Term[], uid: string, at: number, wakes: number[]): number | undefined {
  const mine = terms.filter((t) => t.uid === uid && t.start <= at);
  if (mine.length === 0) return undefined;
  if (mine.some((t) => t.end === undefined || t.end >= at)) return 0;
  const ended = Math.max(...mine.map((t) => t.end ?? 0));
  const woke = Math.max(ended, ...wakes.filter((w) => w <= at));
  return at - woke;
}

function describe(e: AuditEvent): string {
  const r = e.objectRef;
  return `${e.verb} ${r?.resource}${r?.subresource ? `/${r.subresource}` : ""} ${r?.namespace ?? ""}/${r?.name ?? ""}`;
}
// #endregion never-two-leaders

// #region acknowledged-writes
/** A write the workload made: acknowledged (2xx, with the resourceVersion) or of unknown outcome (timeout, connection lost). */
export interface WriteRecord {
  /** `namespace/name`. */
  object: string;
  op: string;
  outcome: "ok" | "unknown";
  uid?: string;
  resourceVersion?: string;
  /** What the write set (replicas, template generation), as a comparable string. */
  fingerprint: string;
  at: number;
}

export interface FinalObject {
  uid: string;
  resourceVersion: string;
  fingerprint: string;
}

export function noAcknowledgedWriteLost(
  writes: WriteRecord[],
  finals: Map<string, FinalObject | undefined>,
): InvariantResult {
  const ev: string[] = [];
  const byObject = new Map<string, WriteRecord[]>();
  for (const w of writes) byObject.set(w.object, [...(byObject.get(w.object) ?? []), w]);
  let acked = 0;
  for (const [object, list] of byObject) {
    acked += list.filter((w) => w.outcome === "ok").length;
    const lastOk = list.findLastIndex((w) => w.outcome === "ok");
    if (lastOk < 0) continue;
    const ack = list[lastOk];
    const final = finals.get(object);
    const at = `acknowledged ${ack.op} at ${new Date(ack.at).toISOString()} (resourceVersion ${ack.resourceVersion}, ${ack.fingerprint})`;
    if (!final) {
      ev.push(`${object}: gone, after ${at}`);
      continue;
    }
    if (ack.uid && final.uid !== ack.uid)
      ev.push(`${object}: uid ${final.uid}, but ${at} was to uid ${ack.uid}`);
    if (ack.resourceVersion && BigInt(final.resourceVersion) < BigInt(ack.resourceVersion))
      ev.push(`${object}: resourceVersion ${final.resourceVersion} is older than the ${at}`);
    // The last acknowledged write, or any later one whose answer never came, may be what is there.
    const allowed = new Set(list.slice(lastOk).map((w) => w.fingerprint));
    if (!allowed.has(final.fingerprint)) ev.push(`${object}: holds ${final.fingerprint}, lost the ${at}`);
  }
  return result("no acknowledged write lost", ev, `${acked} acknowledged writes to ${byObject.size} objects`);
}
// #endregion acknowledged-writes

// #region caches-match
export interface CacheComparison {
  /** "pods", "deployments", … */
  resource: string;
  /** key → `uid@resourceVersion`. */
  cached: Map<string, string>;
  fresh: Map<string, string>;
}

export function cachesMatchFreshList(comparisons: CacheComparison[]): InvariantResult {
  const ev: string[] = [];
  let objects = 0;
  for (const c of comparisons) {
    objects += c.fresh.size;
    for (const [key, v] of c.fresh) {
      const mine = c.cached.get(key);
      if (mine === undefined) ev.push(`${c.resource} ${key}: in the list (${v}), not in the cache`);
      else if (mine !== v) ev.push(`${c.resource} ${key}: cache has ${mine}, the list ${v}`);
    }
    for (const [key, v] of c.cached)
      if (!c.fresh.has(key)) ev.push(`${c.resource} ${key}: in the cache (${v}), gone from the list`);
  }
  return result(
    "every informer cache equals a fresh list",
    ev,
    `${comparisons.length} caches, ${objects} objects`,
  );
}
// #endregion caches-match

// #region no-orphan-process
export interface LiveContainer {
  node: string;
  podUid: string;
  pod: string;
  containerId: string;
  pid: number;
}

export interface OrphanInput {
  /** Container processes alive now, from the kubelets' records. */
  containers: LiveContainer[];
  /** Pods the API server knows, by uid: `deleting` if it has a deletionTimestamp. */
  pods: Map<string, { deleting: boolean }>;
  /** Component processes still alive after the cluster was stopped (absent: not stopped yet). */
  componentsAfterStop?: { name: string; pid: number }[];
}

export function noOrphanProcess(input: OrphanInput): InvariantResult {
  const ev: string[] = [];
  for (const c of input.containers)
    if (!input.pods.has(c.podUid))
      ev.push(
        `container ${c.containerId} (pid ${c.pid}) on ${c.node} runs for pod ${c.pod} uid ${c.podUid}, unknown to the API server`,
      );
  for (const p of input.componentsAfterStop ?? []) ev.push(`${p.name} (pid ${p.pid}) still runs after stop`);
  return result("no orphan process", ev, `${input.containers.length} container processes`);
}
// #endregion no-orphan-process

/** `PASS name` or `FAIL name` followed by its evidence, indented. */
export function formatResults(results: InvariantResult[]): string {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${r.ok ? "PASS" : "FAIL"} ${r.name}${r.summary ? ` (${r.summary})` : ""}`);
    for (const e of r.evidence.slice(0, 20)) lines.push(`     ${e}`);
    if (r.evidence.length > 20) lines.push(`     … ${r.evidence.length - 20} more`);
  }
  return lines.join("\n");
}
