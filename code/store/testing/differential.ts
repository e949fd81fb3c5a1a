/**
 * Differential testing — the same seeded random traffic against our store and a real etcd, over
 * the same gRPC client, answer by answer.
 *
 * Solves:
 * - hand-written tests check the cases their author thought of; a store that claims etcd's
 *   semantics must also agree on the ones nobody thought of: a txn that compares a range on its
 *   lease, a sorted range with a limit at a compacted revision, a watch from the past whose
 *   history a compaction removed. Random operations over a *small* key space make such
 *   collisions common, and the real etcd is the oracle: no model of ours decides what is right;
 * - a difference must be replayable: the traffic is a pure function of the seed (a small
 *   deterministic PRNG, and state read only from etcd's answers), so `DIFF_SEED=<n>` replays the
 *   run that failed, and the report names the op index, the op and both answers.
 *
 * Invariants:
 * - ops run one at a time, each sent to both servers and awaited before the next, so both see
 *   the same sequence of requests and any difference is a difference in semantics;
 * - everything timing-dependent in etcd is kept out of the traffic: leases live far longer than
 *   a run (no expiry), a watch is created only after the previous create was answered, and no
 *   compaction runs until every watch has caught up (see `quiesce`);
 * - only what legitimately differs is ignored (see `normalize`): the member/cluster ids and raft
 *   term, the seconds left on a lease, the order of Go map iterations.
 *
 * @upstream etcd-io/etcd tests/robustness/traffic/etcd.go (etcdTraffic: random KV, txn, lease and watch requests)
 * @upstream etcd-io/etcd tests/robustness/validate/ (comparing what clients saw against a reference)
 * @chapter 01-etcd-watch
 */
import * as grpc from "@grpc/grpc-js";
import { etcdserverpb } from "../etcdserverpb/rpc-pb.ts";

// #region prng
/** mulberry32: a tiny, fast PRNG; the same seed gives the same traffic on every machine. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rand {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}
// #endregion prng

// #region client
// biome-ignore lint/suspicious/noExplicitAny: generated gRPC clients are untyped
type AnyClient = any;
// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages
export type Msg = any;

/** What a unary call came back with: a response, or a gRPC status (code name and message). */
export type Outcome = { ok: Msg } | { error: { code: string; message: string } };

/** A server seen through a plain gRPC client: KV, Lease, and one Watch stream for all watches. */
export class Endpoint {
  private readonly kv: AnyClient;
  private readonly lease: AnyClient;
  private readonly watch: AnyClient;
  private readonly watchCall: grpc.ClientDuplexStream<Msg, Msg>;
  /** Every watch response, in arrival order. */
  readonly watchResponses: Msg[] = [];
  private waiters: (() => void)[] = [];
  streamError?: Error;

  constructor(
    readonly name: string,
    readonly address: string,
  ) {
    // Both servers are read with the same decoding (rpc-pb.ts), so their answers compare field for field.
    const { KV, Lease, Watch } = etcdserverpb();
    const creds = grpc.credentials.createInsecure();
    this.kv = new KV(address, creds);
    this.lease = new Lease(address, creds);
    this.watch = new Watch(address, creds);
    this.watchCall = this.watch.Watch();
    this.watchCall.on("data", (r: Msg) => {
      this.watchResponses.push(r);
      this.wake();
    });
    this.watchCall.on("error", (err: Error) => {
      // Our own close cancels the call; anything else is a finding.
      if (!/Cancelled/i.test(err.message)) this.streamError = err;
      this.wake();
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once `check` holds, re-checked on every watch response; false on timeout. */
  async waitForWatch(check: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0 || this.streamError) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return true;
  }

  unary(service: "KV" | "Lease", method: string, req: Msg): Promise<Outcome> {
    const client = service === "KV" ? this.kv : this.lease;
    return new Promise((resolve) => {
      client[method](req, { deadline: Date.now() + 10_000 }, (err: grpc.ServiceError | null, resp: Msg) =>
        resolve(err ? { error: { code: grpc.status[err.code], message: err.details } } : { ok: resp }),
      );
    });
  }

  private keepAliveCall?: grpc.ClientDuplexStream<Msg, Msg>;
  private keepAliveAnswers: ((r: Outcome) => void)[] = [];

  /** One LeaseKeepAlive request on a stream kept open, and its answer. */
  keepAlive(ID: number): Promise<Outcome> {
    if (!this.keepAliveCall) {
      const call: grpc.ClientDuplexStream<Msg, Msg> = this.lease.LeaseKeepAlive();
      call.on("data", (r: Msg) => this.keepAliveAnswers.shift()?.({ ok: r }));
      call.on("error", (err: grpc.ServiceError) => {
        this.keepAliveCall = undefined;
        for (const answer of this.keepAliveAnswers.splice(0)) {
          answer({ error: { code: grpc.status[err.code], message: err.details } });
        }
      });
      this.keepAliveCall = call;
    }
    const call = this.keepAliveCall;
    return new Promise((resolve) => {
      this.keepAliveAnswers.push(resolve);
      call.write({ ID });
    });
  }

  sendWatch(req: Msg): void {
    this.watchCall.write(req);
  }

  close(): void {
    this.watchCall.cancel();
    this.keepAliveCall?.cancel();
    this.kv.close();
    this.lease.close();
    this.watch.close();
  }
}
// #endregion client

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

// #region traffic
/** Few keys, nested prefixes: ops collide. Fewer than 12, see `genRange` (sort stability). */
const keys = ["a", "a/x", "a/y", "ab", "b", "b/x", "b/y", "c", "d"];
const prefixes = ["a", "a/", "b", "b/", "c", "e"];
const values = ["", "v0", "v1", "v2", "v3"];
/** Lease ids the traffic grants and uses; some are never granted, or already revoked. */
const leaseIDs = [1, 2, 3, 4, 5, 6];
/** Far longer than any run: a lease expiring on its own would make the traffic time-dependent. */
const leaseTTLs = [600, 900, 3600];

const bytes = (s: string) => Buffer.from(s, "latin1");

function prefixEnd(p: string): string {
  return p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1);
}

/**
 * A from-key delete followed by a put with ignore_value/ignore_lease of a key it deleted passes
 * etcd's checks (they read the state before the txn; the duplicate-key check ignores from-key
 * deletes) and then crashes etcd half-way through the txn (v3.5 server/etcdserver/apply.go
 * applyTxn: lg.Panic "unexpected error during txn"). Ours refuses it (apply.ts checkRequestPut,
 * apply.test.ts); the traffic leaves it out, or the reference would die.
 */
function deletesFromKey(txn: Msg): boolean {
  return [...txn.success, ...txn.failure].some(
    (op: Msg) =>
      (op.requestDeleteRange && plain(op.requestDeleteRange.rangeEnd ?? "") === "\0") ||
      (op.requestTxn && deletesFromKey(op.requestTxn)),
  );
}

function keepNothing(txn: Msg): void {
  for (const op of [...txn.success, ...txn.failure]) {
    if (op.requestPut) {
      delete op.requestPut.ignoreValue;
      delete op.requestPut.ignoreLease;
    }
    if (op.requestTxn) keepNothing(op.requestTxn);
  }
}

export type Op =
  | { kind: "unary"; service: "KV" | "Lease"; method: string; req: Msg }
  | { kind: "watch"; req: Msg }
  | { kind: "cancelWatch"; watchId: number };

/** What the generator knows about the servers: only what etcd itself answered. */
export interface TrafficState {
  /** The newest revision etcd reported. */
  rev: number;
  /** The last revision etcd accepted a compaction at (0: none). */
  compactRev: number;
  /** Watch ids etcd created and has not cancelled. */
  openWatches: number[];
  /** Lease ids etcd granted and has not revoked. */
  leases: number[];
}

export class Traffic {
  private readonly r: Rand;
  private unique = 0;
  constructor(readonly seed: number) {
    this.r = new Rand(seed);
  }

  /** A key range: one key, a prefix, from a key on, an explicit [key, end), rarely invalid. */
  private range(): { key: Buffer; rangeEnd?: Buffer } {
    const r = this.r;
    const x = r.next();
    if (x < 0.45) return { key: bytes(r.pick(keys)) };
    if (x < 0.7) {
      const p = r.pick(prefixes);
      return { key: bytes(p), rangeEnd: bytes(prefixEnd(p)) };
    }
    if (x < 0.82) return { key: bytes(r.pick(keys)), rangeEnd: bytes("\0") };
    if (x < 0.98) return { key: bytes(r.pick(keys)), rangeEnd: bytes(r.pick(keys)) };
    return { key: bytes("") }; // an empty key: etcd's "key is not provided"
  }

  /** A revision to read at: mostly the newest, else anywhere, compacted and future included. */
  private revision(s: TrafficState): number {
    const x = this.r.next();
    if (x < 0.53) return 0;
    if (x < 0.55) return -1; // "<= 0 means the newest" (kvstore_txn.go rangeKeys)
    if (x < 0.9) return this.r.int(Math.max(1, s.compactRev), s.rev);
    return this.r.int(1, s.rev + 2);
  }

  private value(): Buffer {
    if (this.r.chance(0.15)) return bytes(`u${this.seed}.${this.unique++}`);
    return bytes(this.r.pick(values));
  }

  /** Mostly no lease; else mostly one etcd granted (a missing lease fails the whole request). */
  private lease(s: TrafficState): number {
    if (this.r.chance(0.65)) return 0;
    return s.leases.length > 0 && this.r.chance(0.85) ? this.r.pick(s.leases) : this.r.pick(leaseIDs);
  }

  genRange(s: TrafficState): Msg {
    const r = this.r;
    return {
      ...this.range(),
      limit: r.chance(0.3) ? r.int(1, 3) : 0,
      revision: this.revision(s),
      // Go's sort.Sort is not stable, but on fewer than 12 elements it is an insertion sort,
      // which is; our key space is smaller than that, so ties keep etcd's key order.
      sortOrder: r.chance(0.35) ? r.pick(["NONE", "ASCEND", "DESCEND"]) : "NONE",
      sortTarget: r.chance(0.35) ? r.pick(["KEY", "VERSION", "CREATE", "MOD", "VALUE"]) : "KEY",
      serializable: r.chance(0.2),
      keysOnly: r.chance(0.15),
      countOnly: r.chance(0.1),
      minModRevision: r.chance(0.1) ? r.int(0, s.rev) : 0,
      maxModRevision: r.chance(0.1) ? r.int(0, s.rev) : 0,
      minCreateRevision: r.chance(0.1) ? r.int(0, s.rev) : 0,
      maxCreateRevision: r.chance(0.1) ? r.int(0, s.rev) : 0,
    };
  }

  genPut(s: TrafficState): Msg {
    const r = this.r;
    const req: Msg = {
      key: bytes(r.pick(keys)),
      value: this.value(),
      lease: this.lease(s),
      prevKv: r.chance(0.5),
    };
    if (r.chance(0.05)) {
      req.ignoreValue = true;
      if (r.chance(0.7)) req.value = bytes("");
    }
    if (r.chance(0.05)) {
      req.ignoreLease = true;
      if (r.chance(0.7)) req.lease = 0;
    }
    return req;
  }

  genDelete(): Msg {
    return { ...this.range(), prevKv: this.r.chance(0.5) };
  }

  genCompare(s: TrafficState): Msg {
    const r = this.r;
    const c: Msg = {
      ...(r.chance(0.8) ? { key: bytes(r.pick(keys)) } : this.range()),
      result: r.pick(["EQUAL", "GREATER", "LESS", "NOT_EQUAL"]),
      target: r.pick(["VERSION", "CREATE", "MOD", "VALUE", "LEASE"]),
    };
    if (c.target === "VERSION") c.version = r.int(0, 3);
    if (c.target === "CREATE") c.createRevision = r.int(0, s.rev + 1);
    if (c.target === "MOD") c.modRevision = r.int(0, s.rev + 1);
    if (c.target === "VALUE") c.value = bytes(r.pick(values));
    if (c.target === "LEASE") c.lease = r.chance(0.3) ? 0 : r.pick(leaseIDs);
    return c;
  }

  genTxn(s: TrafficState, depth = 0): Msg {
    const r = this.r;
    const count = () => r.pick([0, 1, 1, 1, 2, 2, 3]);
    const op = (): Msg => {
      const x = r.next();
      if (x < 0.35) return { requestRange: this.genRange(s) };
      if (x < 0.7) return { requestPut: this.genPut(s) };
      if (x < 0.88 || depth >= 2) return { requestDeleteRange: this.genDelete() };
      return { requestTxn: this.genTxn(s, depth + 1) };
    };
    // Two puts of one key in a branch are refused ("duplicate key"); keep that to some txns.
    const ops = (n: number) => {
      const list = Array.from({ length: n }, op);
      if (r.chance(0.3)) return list;
      const put = new Set<string>();
      return list.filter((o) => {
        if (!o.requestPut) return true;
        const k = String(plain(o.requestPut.key));
        if (put.has(k)) return false;
        put.add(k);
        return true;
      });
    };
    // Rarely more than etcd's --max-txn-ops (128): "too many operations in txn request".
    const many = depth === 0 && r.chance(0.01);
    const txn = {
      compare: Array.from({ length: count() }, () => this.genCompare(s)),
      success: many
        ? Array.from({ length: 129 }, () => ({ requestRange: { key: bytes("a") } }))
        : ops(count()),
      failure: ops(count()),
    };
    if (depth === 0 && deletesFromKey(txn)) keepNothing(txn);
    return txn;
  }

  genCompact(s: TrafficState): Msg {
    const r = this.r;
    const x = r.next();
    // Mostly a valid one; sometimes already compacted, or in the future.
    let revision: number;
    if (x < 0.8) revision = r.int(Math.min(s.compactRev + 1, s.rev), s.rev);
    else if (x < 0.88) revision = r.int(1, Math.max(1, s.compactRev));
    else if (x < 0.9)
      revision = r.int(-1, 0); // etcd's first compacted revision is -1 (kvstore.go)
    else revision = s.rev + r.int(1, 3);
    return { revision, physical: r.chance(0.5) };
  }

  genWatch(s: TrafficState): Msg {
    const r = this.r;
    const x = r.next();
    // From the past (often before a compaction), from now, or from the future.
    let startRevision = x < 0.7 ? r.int(1, s.rev) : x < 0.85 ? 0 : s.rev + r.int(1, 3);
    // Right at the compaction: the oldest history left, whose prev_kvs are compacted away.
    if (x < 0.2 && s.compactRev > 0) startRevision = s.compactRev + r.int(-1, 1);
    const filters: string[] = [];
    if (r.chance(0.1)) filters.push("NOPUT");
    if (r.chance(0.1)) filters.push("NODELETE");
    const range = this.range();
    // etcd watches any key, even an empty one; keep that out: it watches nothing we write.
    if (range.key.length === 0) range.key = bytes("a");
    // A watch id of the client's choosing (etcd ≥ 3.4); taken ones are refused.
    const watchId = r.chance(0.1) ? r.pick([1, 2, 3, 50]) : 0;
    return { createRequest: { ...range, startRevision, prevKv: r.chance(0.6), filters, watchId } };
  }

  /** The next op, given what etcd answered so far. */
  next(s: TrafficState): Op {
    const r = this.r;
    const x = r.next();
    const kv = (method: string, req: Msg): Op => ({ kind: "unary", service: "KV", method, req });
    const lease = (method: string, req: Msg): Op => ({ kind: "unary", service: "Lease", method, req });
    if (x < 0.22) return kv("Put", this.genPut(s));
    if (x < 0.32) return kv("DeleteRange", this.genDelete());
    if (x < 0.55) return kv("Range", this.genRange(s));
    if (x < 0.77) return kv("Txn", this.genTxn(s));
    if (x < 0.8) return kv("Compact", this.genCompact(s));
    if (x < 0.86) {
      const TTL = r.chance(0.03) ? 9_000_000_001 : r.pick(leaseTTLs);
      const free = leaseIDs.filter((id) => !s.leases.includes(id));
      const ID = free.length > 0 && r.chance(0.8) ? r.pick(free) : r.pick(leaseIDs);
      return lease("LeaseGrant", { ID, TTL });
    }
    if (x < 0.9) {
      const ID = s.leases.length > 0 && r.chance(0.8) ? r.pick(s.leases) : r.pick(leaseIDs);
      return lease("LeaseRevoke", { ID });
    }
    if (x < 0.92) return lease("LeaseTimeToLive", { ID: r.pick(leaseIDs), keys: r.chance(0.7) });
    if (x < 0.93) return lease("LeaseLeases", {});
    // Renewed to its full TTL, so the answer does not depend on time (0: no such lease).
    if (x < 0.94) return lease("LeaseKeepAlive", { ID: r.pick(leaseIDs) });
    if (x < 0.978 || s.openWatches.length === 0) return { kind: "watch", req: this.genWatch(s) };
    return { kind: "cancelWatch", watchId: r.pick(s.openWatches) };
  }
}
// #endregion traffic

// #region watch-view
/** The index in `responses` of the k-th `created` answer (creates are sent one at a time). */
function createdIndex(responses: Msg[], k: number): number {
  for (const [i, r] of responses.entries()) {
    if (r.created && k-- === 0) return i;
  }
  return -1;
}

function createdAnswer(responses: Msg[], k: number): Msg | undefined {
  return responses[createdIndex(responses, k)];
}

/**
 * The responses of the watch created by the k-th create: from its `created` answer on, those
 * with its id, up to a later `created` with the same id (a client may reuse the id of a watch
 * it cancelled).
 */
function responsesOfWatch(responses: Msg[], k: number): Msg[] {
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
        // derives the text from compact_revision (see withCancelReason in v3rpc-watch.ts).
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
function watchWants(req: Msg, ev: Msg): boolean {
  const key = plain(ev.kv.key) as string;
  const from = plain(req.key) as string;
  const end = req.rangeEnd ? (plain(req.rangeEnd) as string) : "";
  const inRange = end === "" ? key === from : end === "\0" ? key >= from : key >= from && key < end;
  if (!inRange) return false;
  const filters: string[] = req.filters ?? [];
  return !filters.includes(ev.type === "DELETE" ? "NODELETE" : "NOPUT");
}
// #endregion watch-view

// #region run
export interface Mismatch {
  seed: number;
  /** The op after which the difference showed (-1: while starting). */
  opIndex: number;
  op: unknown;
  what: string;
  etcd: unknown;
  ours: unknown;
}

export function formatMismatch(m: Mismatch): string {
  const json = (x: unknown) => JSON.stringify(x, null, 1).replace(/\n\s*/g, " ");
  return [
    `seed ${m.seed}, op #${m.opIndex} (replay: DIFF_SEED=${m.seed}): ${m.what}`,
    `  op:   ${json(m.op)}`,
    `  etcd: ${json(m.etcd)}`,
    `  ours: ${json(m.ours)}`,
  ].join("\n");
}

export interface RunResult {
  ops: number;
  /**
   * What the traffic exercised, so a run that agrees can be seen to have covered something:
   * answers by method and outcome (`Txn ok succeeded`, `Range OutOfRange`, …), and watch events.
   */
  coverage: Record<string, number>;
  mismatch?: Mismatch;
}

// #region etcd-3.4
/**
 * etcd 3.4.23 (our reference binary) and etcd v3.5 up to 3.5.15 delete a tombstone whose
 * revision *equals* the compaction revision, so a watch starting at that revision never sees the
 * deletion (etcd-io/etcd issue #18089). etcd v3.5.16 and v3.4.34 keep it (PR #18274:
 * server/mvcc/key_index.go doCompact, `tomb >= atRev`); so does our store. And 3.4.23 deletes it
 * in the background (a compaction without `physical` answers first), so a watch created just
 * after may still see it. Only this event is left out, on both sides: a DELETE at a revision
 * etcd had compacted at before the watch was created.
 */
function etcd34DropsTombstoneAt(compactRevs: number[]): (ev: Msg) => boolean {
  return (ev) => ev.type === "DELETE" && compactRevs.includes(Number(ev.kv.modRevision));
}
// #endregion etcd-3.4

/** How long etcd may take to sync a new watcher with nothing to send: its loop runs every 100 ms. */
const watchSettleMs = 300;

/** A watch the run created, and what is needed to know when it has caught up. */
interface WatchLog {
  /** The op that created it (-1: the watch on all keys). */
  createdAtOp: number;
  req: Msg;
  watchId: number;
  createdAt: number;
  /** The newest revision when it was created. */
  revAtCreate: number;
  /** The compacted revision when it was created. */
  compactRevAtCreate: number;
  /** Every revision etcd had compacted at when it was created (see etcd34DropsTombstoneAt). */
  compactRevsAtCreate: number[];
  /** Not yet known to be caught up (see `settle`). */
  pending: boolean;
}

/**
 * Runs `count` ops of seed `seed` against two fresh servers, stopping at the first difference.
 * `etcd` is the reference; its answers drive the traffic.
 */
export async function runSeed(
  seed: number,
  count: number,
  etcd: Endpoint,
  ours: Endpoint,
): Promise<RunResult> {
  const traffic = new Traffic(seed);
  const state: TrafficState = { rev: 1, compactRev: 0, openWatches: [], leases: [] };
  const watches: WatchLog[] = [];
  const compactRevs: number[] = [];
  const createdCount = (e: Endpoint) => e.watchResponses.filter((r) => r.created).length;

  // One watch over every key from the start: the full history, compared like any other watch,
  // and the way `quiesce` knows what every other watch must have received.
  const allKeys = {
    createRequest: { key: bytes("\0"), rangeEnd: bytes("\0"), startRevision: 1, prevKv: true },
  };

  const coverage: Record<string, number> = {};
  const count1 = (what: string, n = 1) => {
    coverage[what] = (coverage[what] ?? 0) + n;
  };
  const fail = (opIndex: number, op: unknown, what: string, a: unknown, b: unknown): RunResult => ({
    ops: opIndex + 1,
    coverage,
    mismatch: { seed, opIndex, op: plain(op), what, etcd: a, ours: b },
  });

  /** Creates a watch on both and waits for both answers, so no later write races the create. */
  async function createWatch(opIndex: number, req: Msg): Promise<string | undefined> {
    const want = watches.length + 1;
    etcd.sendWatch(req);
    ours.sendWatch(req);
    for (const e of [etcd, ours]) {
      if (!(await e.waitForWatch(() => createdCount(e) >= want, 5000))) {
        return `${e.name} did not answer the watch create (${e.streamError?.message ?? "timeout"})`;
      }
    }
    const created = createdAnswer(etcd.watchResponses, want - 1);
    const start = Number(req.createRequest.startRevision ?? 0);
    const watchId = Number(created.watchId);
    watches.push({
      createdAtOp: opIndex,
      req: req.createRequest,
      watchId,
      createdAt: Date.now(),
      revAtCreate: state.rev,
      compactRevAtCreate: state.compactRev,
      compactRevsAtCreate: [...compactRevs],
      // etcd syncs a watch from now or from the future at once (watchable_store.go watch:
      // `synced := startRev > s.store.currentRev || startRev == 0`); only one from the past waits.
      pending: !created.canceled && start > 0 && start <= state.rev,
    });
    // The watch on all keys stays: `quiesce` depends on it.
    if (!created.canceled && opIndex >= 0) state.openWatches.push(watchId);
    return undefined;
  }

  /** The events etcd sent on the watch over all keys. */
  const history = (e: Endpoint): Msg[] =>
    e.watchResponses.filter((r) => Number(r.watchId) === watches[0].watchId).flatMap((r) => r.events ?? []);

  /** Waits until the watch on all keys has delivered revision `rev` on both servers. */
  async function allKeysAt(rev: number): Promise<string | undefined> {
    const hasRev = (e: Endpoint) => () => history(e).some((ev: Msg) => Number(ev.kv.modRevision) >= rev);
    for (const e of [etcd, ours]) {
      if (rev > 1 && !(await e.waitForWatch(hasRev(e), 5000))) {
        const seen = history(e).map((ev: Msg) => Number(ev.kv.modRevision));
        return `${e.name}'s watch on all keys never reached revision ${rev} (saw ${seen.join(",")})`;
      }
    }
    return undefined;
  }

  /**
   * Waits until a new watch has caught up on both servers: until it was cancelled (its start
   * was compacted already), or it received the newest event it wants up to its creation (known
   * from the watch on all keys), or, wanting none, until etcd's sync loop has surely run.
   */
  async function settle(w: WatchLog, upto = w.revAtCreate): Promise<string | undefined> {
    const start = Number(w.req.startRevision ?? 0);
    const caughtUp = await allKeysAt(upto);
    if (caughtUp) return caughtUp;
    const k = watches.indexOf(w);
    const ofWatch = (e: Endpoint) => responsesOfWatch(e.watchResponses, k);
    let done: (e: Endpoint) => boolean;
    if (start > 0 && start < w.compactRevAtCreate) {
      done = (e) => ofWatch(e).some((r) => r.canceled);
    } else {
      // A watch "from now" starts after the revision it was created at.
      const from = start > 0 ? start : w.revAtCreate + 1;
      const wanted = history(etcd).filter((ev) => {
        const rev = Number(ev.kv.modRevision);
        return rev >= from && rev <= upto && watchWants(w.req, ev);
      });
      const lastRev = wanted.length > 0 ? Number(wanted[wanted.length - 1].kv.modRevision) : 0;
      if (lastRev === 0) {
        const left = w.pending ? w.createdAt + watchSettleMs - Date.now() : 0;
        if (left > 0) await new Promise((r) => setTimeout(r, left));
        w.pending = false;
        return undefined;
      }
      done = (e) =>
        ofWatch(e).some(
          (r) => r.canceled || (r.events ?? []).some((ev: Msg) => Number(ev.kv.modRevision) >= lastRev),
        );
    }
    for (const e of [etcd, ours]) {
      if (!(await e.waitForWatch(() => done(e), 5000))) {
        return `${e.name}'s watch ${w.watchId} (created at op #${w.createdAtOp}) never caught up`;
      }
    }
    w.pending = false;
    return undefined;
  }

  /**
   * Waits until etcd can no longer be mid-way through anything a watch depends on, so that a
   * compaction next cannot race it:
   * - a watch from the past is caught up by etcd's sync loop, up to 100 ms later; a compaction
   *   first would cancel it (its start is now compacted) — or not, depending on timing. So each
   *   new watch is `settle`d first;
   * - etcd reads a prev_kv when it sends the event; a compaction first could drop it. So both
   *   streams must have delivered the newest revision.
   */
  async function quiesce(): Promise<string | undefined> {
    const caughtUp = await allKeysAt(state.rev);
    if (caughtUp) return caughtUp;
    for (const w of watches.filter((w) => w.pending)) {
      const err = await settle(w);
      if (err) return err;
    }
    // The other watchers of the newest revision were notified in the same loop as the watch on
    // all keys; give their responses the moment they need to be sent too.
    await new Promise((r) => setTimeout(r, 10));
    return undefined;
  }

  /** Compares every watch so far; call after `quiesce`. */
  function compareWatches(opIndex: number): RunResult | undefined {
    for (const e of [etcd, ours]) {
      const broken = watchInvariants(e.watchResponses);
      if (broken) return fail(opIndex, undefined, `${e.name}: ${broken}`, null, null);
    }
    for (const [k, w] of watches.entries()) {
      const a = watchView(etcd.watchResponses, k, etcd34DropsTombstoneAt(w.compactRevsAtCreate));
      const b = watchView(ours.watchResponses, k, etcd34DropsTombstoneAt(w.compactRevsAtCreate));
      const d = firstDifference(a, b);
      if (d) {
        const op = { watchCreatedAtOp: w.createdAtOp, createRequest: w.req };
        return fail(opIndex, op, `watch #${k} differs at ${d}`, a, b);
      }
    }
    return undefined;
  }

  const startErr = await createWatch(-1, allKeys);
  if (startErr) return fail(-1, allKeys, startErr, null, null);

  for (let i = 0; i < count; i++) {
    const op = traffic.next(state);
    if (op.kind === "watch") {
      const err = await createWatch(i, op.req);
      if (err) return fail(i, op, err, null, null);
      continue;
    }
    if (op.kind === "cancelWatch") {
      // The newest watch with that id (an id of a cancelled watch may be taken again).
      const k = watches.findLastIndex((w) => w.watchId === op.watchId);
      // Cancelled before etcd's sync loop ran, a watch from the past would miss its history; and
      // an event still on its way when the cancel arrives may or may not be sent (etcd's sendLoop
      // picks between its event and control channels at random, and drops events of a watch it
      // has announced cancelled). So the watch first receives everything up to now.
      const err = await settle(watches[k], state.rev);
      if (err) return fail(i, op, err, null, null);
      // Every cancel of a watch the stream still knows is answered — one that compaction
      // cancelled too (etcd keeps its id until the client cancels it).
      const cancelsOf = (e: Endpoint) =>
        responsesOfWatch(e.watchResponses, k).filter((r) => r.canceled).length;
      for (const e of [etcd, ours]) {
        const before = cancelsOf(e);
        e.sendWatch({ cancelRequest: { watchId: op.watchId } });
        if (!(await e.waitForWatch(() => cancelsOf(e) > before, 5000))) {
          return fail(i, op, `${e.name} did not answer the cancel`, null, null);
        }
      }
      state.openWatches = state.openWatches.filter((id) => id !== op.watchId);
      continue;
    }
    if (op.method === "Compact") {
      const err = await quiesce();
      if (err) return fail(i, op, err, null, null);
      const broken = compareWatches(i - 1);
      if (broken) return broken;
    }
    const send = (e: Endpoint) =>
      op.method === "LeaseKeepAlive" ? e.keepAlive(op.req.ID) : e.unary(op.service, op.method, op.req);
    const [a, b] = await Promise.all([send(etcd), send(ours)]);
    const na = normalize(op.method, a);
    const nb = normalize(op.method, b);
    const d = firstDifference(na, nb);
    if (d) return fail(i, op, `answers differ at ${d}`, na, nb);
    count1(
      `${op.method} ${"ok" in a ? "ok" : a.error.code}${op.method === "Txn" && "ok" in a ? (a.ok.succeeded ? " succeeded" : " failed") : ""}`,
    );
    if ("ok" in a) {
      const rev = Number(a.ok.header?.revision ?? 0);
      if (rev > state.rev) state.rev = rev;
      if (op.method === "Compact") {
        state.compactRev = op.req.revision;
        compactRevs.push(op.req.revision);
      }
      if (op.method === "LeaseGrant") state.leases.push(op.req.ID);
      if (op.method === "LeaseRevoke") state.leases = state.leases.filter((id) => id !== op.req.ID);
    }
  }

  const err = await quiesce();
  if (err) return fail(count - 1, undefined, err, null, null);
  for (const [k, w] of watches.entries()) {
    const view = watchView(etcd.watchResponses, k) as {
      events: unknown[];
      cancels: { compactRevision: number }[];
    };
    count1("watch events compared", view.events.length);
    if (view.cancels.some((c) => c.compactRevision)) count1("watches cancelled by compaction");
    if (Number(w.req.startRevision) > 0 && Number(w.req.startRevision) <= w.revAtCreate)
      count1("watches from the past");
  }
  return compareWatches(count - 1) ?? { ops: count, coverage };
}
// #endregion run
