/**
 * Differential comparison — what of two servers' answers must agree, and how a watch's history
 * is read out of one stream.
 *
 * Solves: our store and the real etcd answer the same request; their answers must be equal except
 * where they legitimately differ (ids, raft term, seconds left on a lease, Go map order), and a
 * watch's events must be compared watch by watch although all watches share one stream.
 *
 * Invariants:
 * - `normalize` removes only what may legitimately differ; everything else is compared.
 *
 * @upstream none — a course test harness (etcd's tests/robustness/validate/, after v3.5, does the same job)
 * @chapter 01-etcd-watch
 */

// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages
export type Msg = any;

/** What a unary call came back with: a response, or a gRPC status (code name and message). */
export type Outcome = { ok: Msg } | { error: { code: string; message: string } };

// #region normalize
/** Bytes as text (our keys and values are ASCII), so answers print and compare as JSON. */
export function plain(x: unknown): unknown {
  if (x instanceof Uint8Array) return Buffer.from(x).toString("latin1");
  if (Array.isArray(x)) return x.map(plain);
  if (x && typeof x === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) {
      if (v === null || v === undefined) continue;
      out[k] = plain(v);
    }
    return out;
  }
  return x;
}

/**
 * What may legitimately differ is removed here, and only that:
 * - `clusterId`, `memberId`: derived from the peer URLs, which differ (random ports);
 * - `raftTerm`: a real etcd's term depends on its elections (we answer a fixed term);
 * - a lease's remaining `TTL` in LeaseTimeToLive: wall-clock seconds;
 * - the order of LeaseTimeToLive keys and LeaseLeases ids: etcd builds both by iterating a Go
 *   map (lessor.go Lease.Keys, lessor.Leases), so its order is random from call to call.
 */
export function normalize(method: string, outcome: Outcome): unknown {
  if ("error" in outcome) return outcome;
  const resp = stripIds(plain(outcome.ok)) as Record<string, unknown>;
  if (method === "LeaseTimeToLive") {
    delete resp.TTL;
    (resp.keys as string[]).sort();
  }
  if (method === "LeaseLeases") (resp.leases as { ID: number }[]).sort((a, b) => a.ID - b.ID);
  return { ok: resp };
}

function stripIds(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(stripIds);
  if (x && typeof x === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) {
      if (k === "clusterId" || k === "memberId" || k === "raftTerm") continue;
      out[k] = stripIds(v);
    }
    return out;
  }
  return x;
}

/** The path of the first place two JSON-like values differ, e.g. `ok.kvs[1].modRevision`. */
export function firstDifference(a: unknown, b: unknown, path = ""): string | undefined {
  if (a === b) return undefined;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return path || "(root)";
  if (Array.isArray(a) !== Array.isArray(b)) return path || "(root)";
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
    const d = firstDifference(ao[k], bo[k], path ? `${path}.${k}` : k);
    if (d) return d;
  }
  return undefined;
}
// #endregion normalize

// #region watch-view
/** The index in `responses` of the k-th `created` answer (creates are sent one at a time). */
function createdIndex(responses: Msg[], k: number): number {
  for (const [i, r] of responses.entries()) {
    if (r.created && k-- === 0) return i;
  }
  return -1;
}

export function createdAnswer(responses: Msg[], k: number): Msg | undefined {
  return responses[createdIndex(responses, k)];
}

/**
 * The responses of the watch created by the k-th create: from its `created` answer on, those
 * with its id, up to a later `created` with the same id (a client may reuse the id of a watch
 * it cancelled).
 */
export function responsesOfWatch(responses: Msg[], k: number): Msg[] {
  const at = createdIndex(responses, k);
  if (at < 0) return [];
  const watchId = Number(responses[at].watchId);
  // A refused create (an empty range, a taken id) answers with id -1, which all refusals share.
  if (watchId === -1) return [responses[at]];
  const mine = [responses[at]];
  for (const r of responses.slice(at + 1)) {
    if (Number(r.watchId) !== watchId) continue;
    if (r.created) break;
    mine.push(r);
  }
  return mine;
}

export function watchView(
  responses: Msg[],
  k: number,
  skipEvent: (ev: Msg) => boolean = () => false,
): unknown {
  const mine = responsesOfWatch(responses, k);
  const created = mine[0];
  if (!created) return undefined;
  const watchId = Number(created.watchId);
  const events = mine.flatMap((r) =>
    (r.events ?? []).filter((e: Msg) => !skipEvent(e)).map((e: Msg) => plain(e)),
  );
  // A watch cancelled by compaction is cancelled again, and answered, when the client cancels it.
  const cancels = mine.filter((r) => r.canceled);
  return {
    watchId,
    revision: Number(created.header?.revision),
    events,
    cancels: cancels.map((r) => {
      const compacted = Number(r.compactRevision) !== 0;
      return {
        compactRevision: Number(r.compactRevision),
        // Ours fills cancel_reason for a compaction too; etcd leaves it empty and its client
        // derives the text from compact_revision (see withCancelReason in v3rpc/watch.ts).
        cancelReason: compacted ? "(compacted)" : r.cancelReason,
        // The header of a compaction cancel carries the revision etcd's sync loop ran at: timing.
        revision: compacted ? "(sync time)" : Number(r.header?.revision),
      };
    }),
  };
}

/** A revision's events arrive in one response; a response's header is at least its events'. */
export function watchInvariants(responses: Msg[]): string | undefined {
  const lastRevOf = new Map<number, number>();
  for (const [i, r] of responses.entries()) {
    const id = Number(r.watchId);
    if (r.created) lastRevOf.delete(id); // a new watch, maybe reusing the id of a cancelled one
    const revs = (r.events ?? []).map((e: Msg) => Number(e.kv.modRevision));
    if (revs.length === 0) continue;
    const last = lastRevOf.get(id) ?? 0;
    if (revs[0] <= last) return `response ${i} of watch ${id} repeats or splits revision ${revs[0]}`;
    if (Number(r.header.revision) < revs[revs.length - 1]) {
      return `response ${i} of watch ${id} has header revision ${r.header.revision} below its events`;
    }
    lastRevOf.set(id, revs[revs.length - 1]);
  }
  return undefined;
}

/** Whether a watch create request covers an event (range and filters). */
export function watchWants(req: Msg, ev: Msg): boolean {
  const key = plain(ev.kv.key) as string;
  const from = plain(req.key) as string;
  const end = req.rangeEnd ? (plain(req.rangeEnd) as string) : "";
  const inRange = end === "" ? key === from : end === "\0" ? key >= from : key >= from && key < end;
  if (!inRange) return false;
  const filters: string[] = req.filters ?? [];
  return !filters.includes(ev.type === "DELETE" ? "NODELETE" : "NOPUT");
}
// #endregion watch-view
