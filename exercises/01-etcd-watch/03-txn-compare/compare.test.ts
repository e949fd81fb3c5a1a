import { describe, expect, it } from "vitest";
import { applyTxn } from "../../../code/store/etcdserver/apply.ts";
import type {
  Compare,
  CompareResult,
  CompareTarget,
  TxnRequest,
  TxnResponse,
} from "../../../code/store/etcdserverpb/rpc.ts";
import { Lessor } from "../../../code/store/lease/lessor.ts";
import { KVStore } from "../../../code/store/mvcc/kvstore.ts";
import type { KeyValue } from "../../../code/store/mvccpb/kv.ts";
import { toBytes, toText } from "../../../code/store/pkg/bytes.ts";
import { FakeClock } from "../../../code/store/pkg/clock.ts";
import { applyCompare, compareKV } from "./compare.ts";

const b = toBytes;

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

describe("compareKV: one compare, one key", () => {
  // create_revision 4, mod_revision 7, version 3, value "m", lease 42
  const kv: KeyValue = {
    key: b("k"),
    createRevision: 4,
    modRevision: 7,
    version: 3,
    value: b("m"),
    lease: 42,
  };
  const field: Record<CompareTarget, keyof Compare> = {
    VERSION: "version",
    CREATE: "createRevision",
    MOD: "modRevision",
    LEASE: "lease",
    VALUE: "value",
  };
  const rows: [CompareTarget, CompareResult, number | string, boolean][] = [
    ["VERSION", "EQUAL", 3, true],
    ["VERSION", "EQUAL", 2, false],
    ["VERSION", "NOT_EQUAL", 3, false],
    ["VERSION", "NOT_EQUAL", 1, true],
    ["VERSION", "GREATER", 2, true],
    ["VERSION", "GREATER", 3, false],
    ["VERSION", "LESS", 4, true],
    ["VERSION", "LESS", 3, false],
    ["CREATE", "EQUAL", 4, true],
    ["CREATE", "LESS", 5, true],
    ["CREATE", "GREATER", 5, false],
    ["MOD", "EQUAL", 7, true],
    ["MOD", "GREATER", 6, true],
    ["MOD", "LESS", 7, false],
    ["MOD", "LESS", 100, true],
    ["LEASE", "EQUAL", 42, true],
    ["LEASE", "NOT_EQUAL", 0, true],
    ["LEASE", "GREATER", 41, true],
    ["LEASE", "LESS", 41, false],
    ["VALUE", "EQUAL", "m", true],
    ["VALUE", "NOT_EQUAL", "m", false],
    ["VALUE", "GREATER", "a", true],
    ["VALUE", "LESS", "n", true],
    ["VALUE", "LESS", "ma", true], // "m" is a prefix of "ma": the shorter sorts first
    ["VALUE", "GREATER", "", true],
  ];
  it.each(rows)("%s %s %j on the key is %s", (target, result, against, expected) => {
    const c = {
      key: b("k"),
      target,
      result,
      [field[target]]: typeof against === "string" ? b(against) : against,
    } as Compare;
    expect(compareKV(c, kv)).toBe(expected);
  });

  it("reads a target the compare leaves unset as 0, or as the empty value", () => {
    expect(compareKV({ key: b("k"), target: "VERSION", result: "GREATER" }, kv)).toBe(true); // 3 > 0
    expect(compareKV({ key: b("k"), target: "LEASE", result: "EQUAL" }, { ...kv, lease: 0 })).toBe(true);
    expect(compareKV({ key: b("k"), target: "VALUE", result: "EQUAL" }, { ...kv, value: b("") })).toBe(true);
  });

  it("compares values as bytes, not as text", () => {
    const binary = { ...kv, value: new Uint8Array([0x80]) }; // not valid UTF-8
    const c = (result: CompareResult, value: number[]): Compare => ({
      key: b("k"),
      target: "VALUE",
      result,
      value: new Uint8Array(value),
    });
    expect(compareKV(c("EQUAL", [0xff]), binary)).toBe(false);
    expect(compareKV(c("LESS", [0xff]), binary)).toBe(true);
    expect(compareKV(c("GREATER", [0x7f]), binary)).toBe(true);
    expect(compareKV(c("EQUAL", [0x80]), binary)).toBe(true);
  });
});

describe("applyCompare inside the real store's txn", () => {
  function setup() {
    const lessor = new Lessor({ clock: new FakeClock() });
    return { store: new KVStore({ lessor }), lessor };
  }

  /** Runs the txn on the real store; your applyCompare decides every compare in it. */
  function txn(store: KVStore, req: TxnRequest): TxnResponse {
    return ok(applyTxn(store, req, applyCompare));
  }

  function holds(store: KVStore, ...compare: Compare[]): boolean {
    return txn(store, { compare }).succeeded;
  }

  function currentValue(store: KVStore, key: string): string | undefined {
    const kv = ok(store.range(b(key))).kvs[0];
    return kv && toText(kv.value);
  }

  it("create only if absent: version = 0 holds for a key that does not exist", () => {
    const { store } = setup();
    const createIfAbsent = (value: string) =>
      txn(store, {
        compare: [{ key: b("/registry/leases/lock"), target: "VERSION", result: "EQUAL", version: 0 }],
        success: [{ requestPut: { key: b("/registry/leases/lock"), value: b(value) } }],
      }).succeeded;
    expect(createIfAbsent("holder-1")).toBe(true);
    expect(createIfAbsent("holder-2")).toBe(false);
    expect(currentValue(store, "/registry/leases/lock")).toBe("holder-1");
    expect(holds(store, { key: b("nope"), target: "CREATE", result: "EQUAL", createRevision: 0 })).toBe(true);
    expect(holds(store, { key: b("nope"), target: "MOD", result: "LESS", modRevision: 1 })).toBe(true);
  });

  it("optimistic concurrency: update only if mod_revision is still the one read", () => {
    const { store } = setup();
    ok(store.put(b("/registry/pods/default/web"), b("v1"))); // 2
    const update = (readAt: number, value: string) =>
      txn(store, {
        compare: [
          { key: b("/registry/pods/default/web"), target: "MOD", result: "EQUAL", modRevision: readAt },
        ],
        success: [{ requestPut: { key: b("/registry/pods/default/web"), value: b(value) } }],
        failure: [{ requestRange: { key: b("/registry/pods/default/web") } }],
      });
    expect(update(2, "v2").succeeded).toBe(true); // 3
    const stale = update(2, "v3"); // someone else wrote at 3: this writer's read is stale
    expect(stale.succeeded).toBe(false);
    expect(toText(stale.responses[0].responseRange!.kvs[0].value)).toBe("v2");
    expect(currentValue(store, "/registry/pods/default/web")).toBe("v2");
  });

  it("a value compare on a key that does not exist fails, whatever it compares with", () => {
    const { store } = setup();
    for (const result of ["EQUAL", "NOT_EQUAL", "LESS", "GREATER"] as const) {
      for (const value of ["", "x"]) {
        expect(
          holds(store, { key: b("missing"), target: "VALUE", result, value: b(value) }),
          `${result} "${value}"`,
        ).toBe(false);
      }
    }
  });

  it('a value compare on a key whose value is empty sees ""', () => {
    const { store } = setup();
    ok(store.put(b("empty"), b("")));
    expect(holds(store, { key: b("empty"), target: "VALUE", result: "EQUAL", value: b("") })).toBe(true);
    expect(holds(store, { key: b("empty"), target: "VALUE", result: "LESS", value: b("a") })).toBe(true);
  });

  it("compares binary values byte by byte (Kubernetes stores objects as protobuf, not text)", () => {
    const { store } = setup();
    ok(store.put(b("/registry/pods/default/web"), new Uint8Array([0x6b, 0x38, 0x73, 0x00, 0x80])));
    const value = (result: CompareResult, bytes: number[]): Compare => ({
      key: b("/registry/pods/default/web"),
      target: "VALUE",
      result,
      value: new Uint8Array(bytes),
    });
    expect(holds(store, value("EQUAL", [0x6b, 0x38, 0x73, 0x00, 0x80]))).toBe(true);
    expect(holds(store, value("EQUAL", [0x6b, 0x38, 0x73, 0x00, 0xff]))).toBe(false);
    expect(holds(store, value("LESS", [0x6b, 0x38, 0x73, 0x00, 0xff]))).toBe(true);
  });

  it("compares a key's lease: 0 without one", () => {
    const { store, lessor } = setup();
    const lease = ok(lessor.grant(7, 60));
    ok(store.put(b("leased"), b("x"), lease.id));
    ok(store.put(b("plain"), b("x")));
    expect(holds(store, { key: b("leased"), target: "LEASE", result: "EQUAL", lease: 7 })).toBe(true);
    expect(holds(store, { key: b("plain"), target: "LEASE", result: "EQUAL", lease: 0 })).toBe(true);
    expect(holds(store, { key: b("plain"), target: "LEASE", result: "EQUAL", lease: 7 })).toBe(false);
    expect(holds(store, { key: b("missing"), target: "LEASE", result: "EQUAL", lease: 0 })).toBe(true);
  });

  it("a compare over a range holds only if it holds for every key in the range", () => {
    const { store } = setup();
    ok(store.put(b("/locks/a"), b("1"))); // version 1
    ok(store.put(b("/locks/b"), b("1")));
    ok(store.put(b("/locks/b"), b("2"))); // version 2
    const locks = (result: CompareResult, version: number): Compare => ({
      key: b("/locks/"),
      rangeEnd: b("/locks0"),
      target: "VERSION",
      result,
      version,
    });
    expect(holds(store, locks("GREATER", 0))).toBe(true);
    expect(holds(store, locks("LESS", 3))).toBe(true);
    expect(holds(store, locks("EQUAL", 1))).toBe(false); // /locks/b is at version 2
    expect(holds(store, locks("EQUAL", 2))).toBe(false); // /locks/a is at version 1
    // range_end "\0": every key from /locks/b on
    const fromB: Compare = {
      key: b("/locks/b"),
      rangeEnd: new Uint8Array([0]),
      target: "VERSION",
      result: "EQUAL",
    };
    expect(holds(store, { ...fromB, version: 2 })).toBe(true);
  });

  it("a compare over an empty range compares as on a missing key", () => {
    const { store } = setup();
    ok(store.put(b("/other"), b("x")));
    const empty = { key: b("/jobs/"), rangeEnd: b("/jobs0") };
    expect(holds(store, { ...empty, target: "VERSION", result: "EQUAL", version: 0 })).toBe(true);
    expect(holds(store, { ...empty, target: "VALUE", result: "EQUAL", value: b("") })).toBe(false);
  });

  it("decides nested txns too, all on the state before any op ran", () => {
    const { store } = setup();
    ok(store.put(b("a"), b("1"))); // 2
    const resp = txn(store, {
      compare: [{ key: b("a"), target: "VALUE", result: "EQUAL", value: b("1") }],
      success: [
        { requestPut: { key: b("a"), value: b("2") } },
        {
          requestTxn: {
            // a = "1" still holds for the nested txn: compares are evaluated before the put runs
            compare: [{ key: b("a"), target: "VALUE", result: "EQUAL", value: b("1") }],
            success: [{ requestPut: { key: b("seen-before"), value: b("yes") } }],
          },
        },
      ],
    });
    expect(resp.succeeded).toBe(true);
    expect(resp.responses[1].responseTxn!.succeeded).toBe(true);
    expect(currentValue(store, "a")).toBe("2");
    expect(currentValue(store, "seen-before")).toBe("yes");
  });
});
