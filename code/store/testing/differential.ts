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
 * The traffic is traffic.ts, the comparison validate.ts; this file runs them against two servers.
 * etcd's own counterpart, tests/robustness/ (random traffic checked against a model of etcd),
 * came after v3.5; here the real etcd itself is the model.
 *
 * @upstream none — a course test harness (etcd's tests/robustness/ came after v3.5)
 * @chapter 01-etcd-watch
 */
import * as grpc from "@grpc/grpc-js";
import { etcdserverpb } from "../etcdserverpb/rpc-pb.ts";
import { bytes, Traffic, type TrafficState } from "./traffic.ts";
import {
  createdAnswer,
  firstDifference,
  type Msg,
  normalize,
  type Outcome,
  plain,
  responsesOfWatch,
  watchInvariants,
  watchView,
  watchWants,
} from "./validate.ts";

// #region client
// biome-ignore lint/suspicious/noExplicitAny: generated gRPC clients are untyped
type AnyClient = any;

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
    // Both servers are read with the same decoding (etcdserverpb/rpc-pb.ts), so their answers compare field for field.
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
