/**
 * Differential traffic — seeded random etcd requests over a small key space, so that rare
 * combinations collide often.
 *
 * Solves: the differential harness (differential.ts) needs requests nobody thought to write by
 * hand — a txn that compares a range on its lease, a sorted range with a limit at a compacted
 * revision, a watch from the past whose history a compaction removed — and needs the same ones
 * again to replay a failure: the traffic is a pure function of the seed and of what etcd
 * answered (`TrafficState`).
 *
 * Invariants:
 * - nothing here depends on time: leases outlive any run, and the state the generator reads is
 *   only what the reference etcd answered.
 *
 * @upstream none — a course test harness (etcd's tests/robustness/traffic/, after v3.5, does the same job)
 * @chapter 01-etcd-watch
 */

import { mulberry32 } from "../../testing/random.ts";
import { type Msg, plain } from "./validate.ts";

// #region prng
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

// #region traffic
/** Few keys, nested prefixes: ops collide. Fewer than 12, see `genRange` (sort stability). */
const keys = ["a", "a/x", "a/y", "ab", "b", "b/x", "b/y", "c", "d"];
const prefixes = ["a", "a/", "b", "b/", "c", "e"];
const values = ["", "v0", "v1", "v2", "v3"];
/** Lease ids the traffic grants and uses; some are never granted, or already revoked. */
const leaseIDs = [1, 2, 3, 4, 5, 6];
/** Far longer than any run: a lease expiring on its own would make the traffic time-dependent. */
const leaseTTLs = [600, 900, 3600];

export const bytes = (s: string) => Buffer.from(s, "latin1");

function prefixEnd(p: string): string {
  return p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1);
}

/**
 * A from-key delete followed by a put with ignore_value/ignore_lease of a key it deleted passes
 * etcd's checks (they read the state before the txn; the duplicate-key check ignores from-key
 * deletes) and then crashes etcd half-way through the txn (v3.5 server/etcdserver/apply.go
 * applyTxn: lg.Panic "unexpected error during txn"). Ours refuses it (etcdserver/apply.ts
 * checkRequestPut, apply.test.ts); the traffic leaves it out, or the reference would die.
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
