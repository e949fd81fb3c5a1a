import { describe, expect, it } from "vitest";
import type { Compare, RequestOp, TxnResponse } from "../etcdserverpb/rpc.ts";
import { ErrLeaseNotFound, Lessor } from "../lease/lessor.ts";
import { KVStore } from "../mvcc/kvstore.ts";
import { ErrCompacted, ErrFutureRev } from "../mvcc/kvstore-txn.ts";
import type { KeyValue } from "../mvccpb/kv.ts";
import { toBytes, toText } from "../pkg/bytes.ts";
import { FakeClock } from "../pkg/clock.ts";
import { applyDeleteRange, applyPut, applyRange, applyTxn, ErrKeyNotFound } from "./apply.ts";

const b = toBytes;
const zero = new Uint8Array([0]);

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

const put = (key: string, value: string, lease = 0): RequestOp => ({
  requestPut: { key: b(key), value: b(value), lease },
});
const get = (key: string, rangeEnd?: Uint8Array): RequestOp => ({ requestRange: { key: b(key), rangeEnd } });
const del = (key: string): RequestOp => ({ requestDeleteRange: { key: b(key) } });

function store(): KVStore {
  const s = new KVStore({ lessor: new Lessor({ clock: new FakeClock() }) });
  s.put(b("a"), b("1")); // 2
  s.put(b("a"), b("2")); // 3
  s.put(b("b"), b("x")); // 4
  return s;
}

function holds(s: KVStore, c: Compare): boolean {
  return ok(applyTxn(s, { compare: [c] })).succeeded;
}

describe("txn compares", () => {
  it("compare each target with each operator", () => {
    const s = store();
    // a: create 2, mod 3, version 2, value "2", lease 0
    expect(holds(s, { key: b("a"), target: "VERSION", result: "EQUAL", version: 2 })).toBe(true);
    expect(holds(s, { key: b("a"), target: "VERSION", result: "GREATER", version: 1 })).toBe(true);
    expect(holds(s, { key: b("a"), target: "CREATE", result: "EQUAL", createRevision: 2 })).toBe(true);
    expect(holds(s, { key: b("a"), target: "MOD", result: "LESS", modRevision: 4 })).toBe(true);
    expect(holds(s, { key: b("a"), target: "MOD", result: "LESS", modRevision: 3 })).toBe(false);
    expect(holds(s, { key: b("a"), target: "VALUE", result: "EQUAL", value: b("2") })).toBe(true);
    expect(holds(s, { key: b("a"), target: "VALUE", result: "GREATER", value: b("1") })).toBe(true);
    expect(holds(s, { key: b("a"), target: "VALUE", result: "NOT_EQUAL", value: b("2") })).toBe(false);
    expect(holds(s, { key: b("a"), target: "LEASE", result: "EQUAL", lease: 0 })).toBe(true);
  });

  it("a missing key compares as version 0, create 0, mod 0, lease 0 — but never by value", () => {
    const s = store();
    const k = b("missing");
    expect(holds(s, { key: k, target: "VERSION", result: "EQUAL", version: 0 })).toBe(true);
    expect(holds(s, { key: k, target: "CREATE", result: "EQUAL", createRevision: 0 })).toBe(true);
    expect(holds(s, { key: k, target: "MOD", result: "LESS", modRevision: 1 })).toBe(true);
    expect(holds(s, { key: k, target: "LEASE", result: "EQUAL", lease: 0 })).toBe(true);
    expect(holds(s, { key: k, target: "VALUE", result: "EQUAL", value: new Uint8Array() })).toBe(false);
    expect(holds(s, { key: k, target: "VALUE", result: "NOT_EQUAL", value: b("x") })).toBe(false);
  });

  it("a compare over a range must hold for every key in it", () => {
    const s = store();
    expect(holds(s, { key: b("a"), rangeEnd: zero, target: "MOD", result: "GREATER", modRevision: 2 })).toBe(
      true,
    );
    expect(holds(s, { key: b("a"), rangeEnd: zero, target: "MOD", result: "GREATER", modRevision: 3 })).toBe(
      false,
    );
    expect(holds(s, { key: b("a"), rangeEnd: b("c"), target: "VERSION", result: "EQUAL", version: 2 })).toBe(
      false,
    );
    // an empty range compares like a missing key
    expect(holds(s, { key: b("x"), rangeEnd: b("z"), target: "VERSION", result: "EQUAL", version: 0 })).toBe(
      true,
    );
    expect(holds(s, { key: b("x"), rangeEnd: b("z"), target: "VALUE", result: "EQUAL", value: b("") })).toBe(
      false,
    );
  });

  it("all compares must hold (AND)", () => {
    const s = store();
    const r = ok(
      applyTxn(s, {
        compare: [
          { key: b("a"), target: "VERSION", result: "EQUAL", version: 2 },
          { key: b("b"), target: "VALUE", result: "EQUAL", value: b("nope") },
        ],
      }),
    );
    expect(r.succeeded).toBe(false);
  });
});

describe("txn ops", () => {
  it("runs success or failure atomically at one revision", () => {
    const s = store();
    const r = ok(
      applyTxn(s, {
        compare: [{ key: b("a"), target: "MOD", result: "EQUAL", modRevision: 3 }],
        success: [put("a", "3"), put("c", "1"), del("b"), get("a", zero)],
        failure: [put("never", "x")],
      }),
    );
    expect(r.succeeded).toBe(true);
    expect(r.header.revision).toBe(5);
    expect(r.responses[0].responsePut?.header.revision).toBe(5);
    expect(r.responses[2].responseDeleteRange?.deleted).toBe(1);
    // the range inside the txn sees the txn's own writes
    const seen = r.responses[3].responseRange!;
    expect(seen.kvs.map((kv) => `${toText(kv.key)}=${toText(kv.value)}`)).toEqual(["a=3", "c=1"]);
    expect(seen.header.revision).toBe(5);
    expect(s.rev()).toBe(5);
    expect(s.backend.range(5, 6).map((rec) => rec.rev.sub)).toEqual([0, 1, 2]);
  });

  it("the failure branch runs when a compare fails (compare-and-swap)", () => {
    const s = store();
    const r = ok(
      applyTxn(s, {
        compare: [{ key: b("a"), target: "MOD", result: "EQUAL", modRevision: 2 }],
        success: [put("a", "lost update")],
        failure: [get("a")],
      }),
    );
    expect(r.succeeded).toBe(false);
    expect(toText(r.responses[0].responseRange!.kvs[0].value)).toBe("2");
    expect(r.header.revision).toBe(4); // nothing written: no new revision
    expect(s.rev()).toBe(4);
  });

  it("an empty txn and a read-only txn do not bump the revision", () => {
    const s = store();
    expect(ok(applyTxn(s, {})).header.revision).toBe(4);
    expect(ok(applyTxn(s, { success: [get("a")] })).header.revision).toBe(4);
    expect(ok(applyTxn(s, { success: [del("nothing")] })).header.revision).toBe(4);
    expect(s.rev()).toBe(4);
  });

  it("nested txns choose their branch from the state before the outer txn ran", () => {
    const s = store();
    const r = ok(
      applyTxn(s, {
        success: [
          put("a", "changed"),
          {
            requestTxn: {
              // a's value is still "2" for this compare, although the put above ran first
              compare: [{ key: b("a"), target: "VALUE", result: "EQUAL", value: b("2") }],
              success: [put("nested", "then")],
              failure: [put("nested", "else")],
            },
          },
        ],
      }),
    );
    const nested = r.responses[1].responseTxn as TxnResponse;
    expect(nested.succeeded).toBe(true);
    expect(nested.header.revision).toBe(0); // etcd fills only the outer header
    expect(toText(ok(s.range(b("nested"))).kvs[0].value)).toBe("then");
    expect(r.header.revision).toBe(5);
  });

  it("checks everything before writing anything", () => {
    const s = store();
    expect(applyTxn(s, { success: [put("c", "1"), put("d", "1", 99)] })).toBe(ErrLeaseNotFound);
    expect(
      applyTxn(s, { success: [put("c", "1"), { requestPut: { key: b("zz"), ignoreValue: true } }] }),
    ).toBe(ErrKeyNotFound);
    expect(applyTxn(s, { success: [put("c", "1"), { requestRange: { key: b("a"), revision: 5 } }] })).toBe(
      ErrFutureRev,
    );
    ok(s.compact(3));
    expect(applyTxn(s, { success: [put("c", "1"), { requestRange: { key: b("a"), revision: 2 } }] })).toBe(
      ErrCompacted,
    );
    expect(ok(s.range(b("c"))).kvs).toEqual([]);
    expect(s.rev()).toBe(4);
    // only the branch that runs is checked
    expect(ok(applyTxn(s, { success: [get("a")], failure: [put("d", "1", 99)] })).succeeded).toBe(true);
  });

  it("refuses a put keeping the value or lease of a key an earlier delete of the txn removes", () => {
    // Found by differential.test.ts (seed 17): real etcd crashed on this txn (it checks only the
    // state before the txn, then panics half-way); ours threw half-way and left its write
    // transaction open, so every later write failed.
    const s = store();
    const before = s.rev();
    const keepValue = { requestPut: { key: b("b"), ignoreValue: true } };
    const keepLease = { requestPut: { key: b("b"), value: b("x"), ignoreLease: true } };
    const fromA = { requestDeleteRange: { key: b("a"), rangeEnd: new Uint8Array([0]) } };
    expect(applyTxn(s, { success: [put("c", "1"), fromA, keepValue] })).toBe(ErrKeyNotFound);
    expect(applyTxn(s, { success: [fromA, { requestTxn: { success: [keepLease] } }] })).toBe(ErrKeyNotFound);
    expect(s.rev()).toBe(before);
    // the delete *after* the put is fine, and the store still takes writes
    expect(ok(applyTxn(s, { success: [keepValue, fromA] })).succeeded).toBe(true);
    expect(s.rev()).toBe(before + 1);
    ok(s.put(b("z"), b("1")));
  });
});

describe("applyRange (Range request options)", () => {
  function many(): KVStore {
    const s = new KVStore();
    s.put(b("k3"), b("c")); // 2
    s.put(b("k1"), b("b")); // 3
    s.put(b("k2"), b("a")); // 4
    s.put(b("k1"), b("d")); // 5
    return s;
  }
  const keys = (kvs: { key: Uint8Array }[]) => kvs.map((kv) => toText(kv.key));

  it("limit, more and count", () => {
    const r = ok(applyRange(many().read(), { key: b("k"), rangeEnd: b("l"), limit: 2 }));
    expect(keys(r.kvs)).toEqual(["k1", "k2"]);
    expect(r).toMatchObject({ more: true, count: 3 });
    expect(r.header.revision).toBe(5);
  });

  it("sorts by any target; a non-key target without an order means ascending", () => {
    const s = many();
    const by = (
      sortTarget: "VALUE" | "MOD" | "CREATE" | "VERSION" | "KEY",
      sortOrder?: "ASCEND" | "DESCEND",
    ) => keys(ok(applyRange(s.read(), { key: b("k"), rangeEnd: b("l"), sortTarget, sortOrder })).kvs);
    expect(by("VALUE")).toEqual(["k2", "k3", "k1"]);
    expect(by("MOD", "DESCEND")).toEqual(["k1", "k2", "k3"]);
    expect(by("CREATE")).toEqual(["k3", "k1", "k2"]);
    expect(by("KEY", "DESCEND")).toEqual(["k3", "k2", "k1"]);
    const limited = ok(
      applyRange(s.read(), { key: b("k"), rangeEnd: b("l"), sortTarget: "VALUE", limit: 1 }),
    );
    expect(keys(limited.kvs)).toEqual(["k2"]);
    expect(limited.more).toBe(true);
  });

  it("sorting descending keeps keys that tie on the target in ascending key order, as etcd does", () => {
    // Found by differential.test.ts (seed 3): etcd answered a/y before ab, both with value "".
    const s = new KVStore();
    s.put(b("k1"), b("same"));
    s.put(b("k2"), b("z"));
    s.put(b("k3"), b("same"));
    const desc = ok(
      applyRange(s.read(), { key: b("k"), rangeEnd: b("l"), sortTarget: "VALUE", sortOrder: "DESCEND" }),
    );
    expect(keys(desc.kvs)).toEqual(["k2", "k1", "k3"]);
    const byVersion = ok(
      applyRange(s.read(), { key: b("k"), rangeEnd: b("l"), sortTarget: "VERSION", sortOrder: "DESCEND" }),
    );
    expect(keys(byVersion.kvs)).toEqual(["k1", "k2", "k3"]);
  });

  it("filters by mod and create revision; count is before filtering", () => {
    const s = many();
    const r = ok(applyRange(s.read(), { key: b("k"), rangeEnd: b("l"), minModRevision: 4 }));
    expect(keys(r.kvs)).toEqual(["k1", "k2"]);
    expect(r.count).toBe(3);
    const c = ok(applyRange(s.read(), { key: b("k"), rangeEnd: b("l"), maxCreateRevision: 3 }));
    expect(keys(c.kvs)).toEqual(["k1", "k3"]);
  });

  it("keysOnly and countOnly", () => {
    const s = many();
    const k = ok(applyRange(s.read(), { key: b("k"), rangeEnd: b("l"), keysOnly: true }));
    expect(k.kvs.every((kv) => kv.value.length === 0)).toBe(true);
    const c = ok(applyRange(s.read(), { key: b("k"), rangeEnd: b("l"), countOnly: true }));
    expect(c).toMatchObject({ kvs: [], count: 3, more: false });
  });
});

// Moved here from the store's tests when the store stopped knowing requests: prev_kv,
// ignore_value and ignore_lease are what a Put request means (apply.go), not what mvcc does.
describe("Put and DeleteRange request options", () => {
  const summary = (kv: KeyValue) => ({
    key: toText(kv.key),
    value: toText(kv.value),
    create: kv.createRevision,
    mod: kv.modRevision,
    version: kv.version,
  });

  it("prevKv returns the key before the put", () => {
    const s = new KVStore();
    expect(ok(applyPut(s, undefined, { key: b("k"), value: b("1"), prevKv: true })).prevKv).toBeUndefined();
    const r = ok(applyPut(s, undefined, { key: b("k"), value: b("2"), prevKv: true }));
    expect(summary(r.prevKv!)).toEqual({ key: "k", value: "1", create: 2, mod: 2, version: 1 });
  });

  it("ignoreValue keeps the value, ignoreLease keeps the lease; both need the key", () => {
    const clock = new FakeClock();
    const lessor = new Lessor({ clock });
    const s = new KVStore({ lessor });
    const lease = ok(lessor.grant(7, 60));
    expect(applyPut(s, undefined, { key: b("k"), value: new Uint8Array(), ignoreValue: true })).toBe(
      ErrKeyNotFound,
    );
    expect(applyPut(s, undefined, { key: b("k"), value: b("v"), ignoreLease: true })).toBe(ErrKeyNotFound);
    expect(s.rev()).toBe(1);
    ok(applyPut(s, undefined, { key: b("k"), value: b("v"), lease: lease.id }));
    ok(
      applyPut(s, undefined, { key: b("k"), value: new Uint8Array(), ignoreValue: true, ignoreLease: true }),
    );
    const kv = ok(s.range(b("k"))).kvs[0];
    expect([toText(kv.value), kv.lease, kv.version]).toEqual(["v", 7, 2]);
    ok(applyPut(s, undefined, { key: b("k"), value: b("w"), ignoreValue: false, ignoreLease: false }));
    expect(ok(s.range(b("k"))).kvs[0].lease).toBe(0);
    expect(lessor.getLease(b("k"))).toBe(0);
  });

  it("refuses an unknown lease without writing", () => {
    const s = new KVStore({ lessor: new Lessor({ clock: new FakeClock() }) });
    expect(applyPut(s, undefined, { key: b("k"), value: b("v"), lease: 42 })).toBe(ErrLeaseNotFound);
    expect(s.rev()).toBe(1);
  });

  it("deleteRange with prevKv returns what it deleted", () => {
    const s = new KVStore();
    s.put(b("a"), b("1"));
    s.put(b("b"), b("2"));
    const d = ok(applyDeleteRange(s, undefined, { key: b("a"), rangeEnd: zero, prevKv: true }));
    expect(d.deleted).toBe(2);
    expect(d.prevKvs.map(summary).map((x) => x.value)).toEqual(["1", "2"]);
    expect(d.header.revision).toBe(4);
  });
});
