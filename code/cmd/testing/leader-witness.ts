/**
 * The leader witness — what the API server's audit log says about who acted as leader, when:
 * the terms of the Lease's holders, every binding and who made it, and the writes that broke the
 * rules. The fault tests assert on it instead of trusting the schedulers' own logs.
 * No upstream counterpart: upstream's leader-election tests count callbacks in one process.
 *
 * What "acts as leader" means here, precisely (each write is one ResponseComplete audit event,
 * taken in the order the one API server logged them; `uid` is the writing process, see
 * ha-control-plane.ts):
 * - a *term* of process P starts with a successful Lease write (create or update) that names P's
 *   identity as holder while the previous successful write named someone else (a takeover), and
 *   lasts until a successful write names another holder or none (a release). A Lease deleted by
 *   hand does not end a term: its holder still believes it leads, and rightly recreates it;
 * - a *binding* is a successful create of pods/binding. It is the scheduler acting as leader; one
 *   made by P outside P's term is a *stale binding*.
 *
 * What it checks:
 * - fencing of the Lease itself: an update that changes the holder must be a takeover (an acquire
 *   time no earlier than the previous write's renew time), never a renewal by an old holder
 *   landing on a newer holder's write — the resourceVersion precondition is what forbids it. The
 *   first write after a delete is exempt: only one writer can find the Lease absent;
 * - no pod bound twice (the API server answers a second binding with 409 Conflict; counted);
 * - stale bindings, each with how long after its process's term ended it was made. client-go is
 *   not fencing: a leader that was paused or cut off can act until its next renewals fail for
 *   renewDeadline. The tests bound that window; this file only measures it.
 *
 * @upstream none — test harness (kubernetes/kubernetes staging/src/k8s.io/client-go/tools/leaderelection/leaderelection.go documents that leader election is not fencing)
 * @chapter 06-leader-election
 */
import type { Event as AuditEvent } from "../../apiserver/audit/event.ts";

export interface Term {
  uid: string;
  identity: string;
  /** API server time (ms) of the takeover write. */
  start: number;
  /** API server time of the write that named another holder (or none); undefined: still holding. */
  end?: number;
}

export interface StaleBinding {
  uid: string;
  pod: string;
  at: number;
  /** ms since the end of this process's last term (undefined: it never led — always a bug). */
  sinceTermEnd?: number;
}

export interface Witnessed {
  terms: Term[];
  /** Successful bindings by pod (`namespace/name`): who, when. */
  bindings: Map<string, { uid: string; at: number }[]>;
  /** Bindings refused with 409 Conflict (the pod was already bound). */
  bindingConflicts: number;
  /** Lease writes refused with 409 Conflict (a stale resourceVersion, or a racer won). */
  leaseConflicts: number;
  /** Every failed Lease write (any code, or none), by process, API server time. */
  failedLeaseWrites: Map<string, number[]>;
  staleBindings: StaleBinding[];
  /** Descriptions of Lease writes that broke fencing (must stay empty). */
  fencingViolations: string[];
  /** Pods with more than one successful binding (must stay empty). */
  doubleBound: string[];
}

interface LeaseBody {
  spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string };
}

const time = (s: string | undefined) => (s ? Date.parse(s) : 0);

// #region witness
/** Reads `events` (ResponseComplete, log order) for the Lease kube-system/`leaseName`. */
export function witness(events: readonly AuditEvent[], leaseName: string): Witnessed {
  const w: Witnessed = {
    terms: [],
    bindings: new Map(),
    bindingConflicts: 0,
    leaseConflicts: 0,
    failedLeaseWrites: new Map(),
    staleBindings: [],
    fencingViolations: [],
    doubleBound: [],
  };
  let holder = ""; // identity named by the last successful write
  let lastRenew = 0;
  let term: Term | undefined;
  let deleted = false; // the Lease was deleted since the last successful write
  const lastTermEnd = new Map<string, number>();
  for (const e of events) {
    if (e.stage !== "ResponseComplete") continue;
    const ref = e.objectRef;
    const uid = e.user.uid ?? e.user.username ?? "";
    const code = e.responseStatus?.code ?? 0;
    const at = Date.parse(e.stageTimestamp);
    const ok = code >= 200 && code < 300;
    if (ref?.resource === "leases" && ref.namespace === "kube-system" && ref.name === leaseName) {
      if (e.verb === "delete") {
        if (ok) deleted = true;
        continue;
      }
      if (!(e.verb === "create" || e.verb === "update")) continue;
      if (!ok) {
        if (code === 409) w.leaseConflicts++;
        w.failedLeaseWrites.set(uid, [...(w.failedLeaseWrites.get(uid) ?? []), at]);
        continue;
      }
      const spec = (e.requestObject as LeaseBody | undefined)?.spec ?? {};
      const named = spec.holderIdentity ?? "";
      if (named !== holder) {
        // A write that finds the Lease gone (a create, or a PUT that recreates it) is fenced by
        // the Lease's absence instead; its times were read before the delete, so they may be older.
        if (named !== "" && holder !== "" && !deleted && time(spec.acquireTime) < lastRenew)
          w.fencingViolations.push(
            `${uid} wrote holder ${named} (acquired ${spec.acquireTime}) over ${holder}'s renewal of ${new Date(lastRenew).toISOString()}`,
          );
        if (term) {
          term.end = at;
          lastTermEnd.set(term.uid, at);
        }
        term = named === "" ? undefined : { uid, identity: named, start: at };
        if (term) w.terms.push(term);
        holder = named;
      } else if (term && term.uid !== uid) {
        // The same identity from another process cannot happen (identities are unique).
        w.fencingViolations.push(`${uid} renewed ${named}, which ${term.uid} holds`);
      }
      lastRenew = time(spec.renewTime);
      deleted = false;
      continue;
    }
    if (ref?.resource === "pods" && ref.subresource === "binding" && e.verb === "create") {
      const pod = `${ref.namespace}/${ref.name}`;
      if (code === 409) w.bindingConflicts++;
      if (!ok) continue;
      const list = w.bindings.get(pod) ?? [];
      list.push({ uid, at });
      w.bindings.set(pod, list);
      if (list.length === 2) w.doubleBound.push(pod);
      if (term?.uid !== uid) {
        const ended = lastTermEnd.get(uid);
        w.staleBindings.push({ uid, pod, at, sinceTermEnd: ended === undefined ? undefined : at - ended });
      }
    }
  }
  return w;
}
// #endregion witness

/** One line per term and the counts, for a test's output. */
export function summary(w: Witnessed): string {
  const bindings = [...w.bindings.values()].reduce((n, l) => n + l.length, 0);
  return (
    `${w.terms.length} terms, ${bindings} bindings (${w.bindingConflicts} refused 409), ` +
    `${w.leaseConflicts} Lease writes refused 409, ${w.staleBindings.length} stale bindings`
  );
}
