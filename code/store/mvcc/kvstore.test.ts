import { describe, expect, it } from "vitest";
import { Lessor } from "../lease/lessor.ts";
import type { KeyValue } from "../mvccpb/kv.ts";
import { toBytes, toText } from "../pkg/bytes.ts";
import { FakeClock } from "../pkg/clock.ts";
import { Panic } from "../rpctypes/error.ts";
import { prefixEnd } from "./index.ts";
import type { RangeResult } from "./kv.ts";
import { KVStore } from "./kvstore.ts";
import { ErrCompacted, ErrFutureRev } from "./kvstore-txn.ts";

const b = toBytes;
const zero = new Uint8Array([0]);

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

function summary(kv: KeyValue) {
  return {
    key: toText(kv.key),
    value: toText(kv.value),
    create: kv.createRevision,
    mod: kv.modRevision,
    version: kv.version,
  };
}

function get(s: KVStore, key: string, rev = 0) {
  const r = ok(s.range(b(key), undefined, { rev }));
  return r.kvs[0] ? summary(r.kvs[0]) : undefined;
}

describe("KVStore revisions", () => {
  it("starts at revision 1; each write takes the next revision", () => {
    const s = new KVStore();
    expect(s.rev()).toBe(1);
    expect(s.put(b("a"), b("1"))).toBe(2);
    expect(s.put(b("b"), b("1"))).toBe(3);
    expect(s.rev()).toBe(3);
  });

  it("create_revision, mod_revision and version across delete and re-create", () => {
    const s = new KVStore();
    s.put(b("k"), b("v1")); // 2
    s.put(b("k"), b("v2")); // 3
    expect(get(s, "k")).toEqual({ key: "k", value: "v2", create: 2, mod: 3, version: 2 });
    expect(s.deleteRange(b("k")).rev).toBe(4);
    expect(get(s, "k")).toBeUndefined();
    s.put(b("k"), b("v3")); // 5: a new generation
    expect(get(s, "k")).toEqual({ key: "k", value: "v3", create: 5, mod: 5, version: 1 });
    // the past is still readable
    expect(get(s, "k", 3)).toEqual({ key: "k", value: "v2", create: 2, mod: 3, version: 2 });
    expect(get(s, "k", 4)).toBeUndefined();
    expect(get(s, "k", 1)).toBeUndefined();
  });

  it("deleting nothing takes no revision", () => {
    const s = new KVStore();
    s.put(b("a"), b("1"));
    const d = s.deleteRange(b("zzz"));
    expect(d).toEqual({ deleted: 0, rev: 2 });
    expect(s.rev()).toBe(2);
  });

  it("a write txn gives all its changes one main revision and increasing sub-revisions", () => {
    const s = new KVStore();
    s.put(b("gone"), b("x")); // 2
    const txn = s.write();
    expect(txn.put(b("a"), b("1"))).toBe(3);
    expect(txn.put(b("b"), b("1"))).toBe(3);
    expect(txn.deleteRange(b("gone"), undefined)).toEqual({ deleted: 1, rev: 3 });
    // not visible to readers before end()
    expect(s.rev()).toBe(2);
    expect(ok(s.range(b("a"))).kvs).toEqual([]);
    txn.end();
    expect(s.rev()).toBe(3);
    const subs = s.backend.range(3, 4).map((r) => [r.rev.sub, toText(r.kv.key), r.tombstone]);
    expect(subs).toEqual([
      [0, "a", false],
      [1, "b", false],
      [2, "gone", true],
    ]);
  });

  it("a write txn reads its own writes; a txn that changes nothing keeps the revision", () => {
    const s = new KVStore();
    const txn = s.write();
    txn.put(b("a"), b("1"));
    txn.put(b("a"), b("2"));
    const r = ok(txn.range(b("a"), undefined));
    expect(r.kvs.map(summary)).toEqual([{ key: "a", value: "2", create: 2, mod: 2, version: 2 }]);
    expect(r.rev).toBe(2);
    txn.end();
    const empty = s.write();
    expect(empty.deleteRange(b("nothing"), undefined)).toEqual({ deleted: 0, rev: 2 });
    empty.end();
    expect(s.rev()).toBe(2);
  });

  it("allows one write txn at a time", () => {
    const s = new KVStore();
    const t = s.write();
    expect(() => s.write()).toThrow(Panic);
    t.end();
    expect(() => t.end()).toThrow(Panic);
    expect(() => s.write().end()).not.toThrow();
  });
});

describe("KVStore range", () => {
  function fill(): KVStore {
    const s = new KVStore();
    for (const k of ["a", "b", "c", "d", "e"]) s.put(b(k), b(`v-${k}`)); // revs 2..6
    return s;
  }

  it("returns kvs sorted by key, with the current revision", () => {
    const s = fill();
    const r = ok(s.range(b("a"), zero));
    expect(r.kvs.map((kv) => toText(kv.key))).toEqual(["a", "b", "c", "d", "e"]);
    expect(r.count).toBe(5);
    expect(r.more).toBe(false);
    expect(r.rev).toBe(6);
  });

  it("limit cuts kvs; count still counts all; more says so", () => {
    const s = fill();
    const r = ok(s.range(b("a"), zero, { limit: 2 }));
    expect(r.kvs.map((kv) => toText(kv.key))).toEqual(["a", "b"]);
    expect(r).toMatchObject({ count: 5, more: true });
    expect(ok(s.range(b("a"), zero, { limit: 5 })).more).toBe(false);
  });

  it("keysOnly drops values; countOnly returns just the count", () => {
    const s = fill();
    const k = ok(s.range(b("b"), b("d"), { keysOnly: true }));
    expect(k.kvs.map((kv) => [toText(kv.key), kv.value.length])).toEqual([
      ["b", 0],
      ["c", 0],
    ]);
    const c = ok(s.range(b("a"), zero, { countOnly: true, limit: 1 }));
    expect(c).toEqual({ kvs: [], count: 5, more: false, rev: 6 } satisfies RangeResult);
  });

  it("reads the past; refuses the future", () => {
    const s = fill();
    const past = ok(s.range(b("a"), zero, { rev: 3 }));
    expect(past.kvs.map((kv) => toText(kv.key))).toEqual(["a", "b"]);
    expect(past.rev).toBe(6); // the header revision is the current one
    expect(s.range(b("a"), zero, { rev: 7 })).toBe(ErrFutureRev);
    expect(ErrFutureRev.message).toBe("mvcc: required revision is a future revision");
    expect(ErrFutureRev.code).toBe("OutOfRange");
  });

  it("prefix ranges", () => {
    const s = new KVStore();
    for (const k of ["/registry/pods/a", "/registry/pods/b", "/registry/podsx", "/registry/services/a"])
      s.put(b(k), b("1"));
    const r = ok(s.range(b("/registry/pods/"), prefixEnd(b("/registry/pods/"))));
    expect(r.kvs.map((kv) => toText(kv.key))).toEqual(["/registry/pods/a", "/registry/pods/b"]);
  });
});

describe("KVStore writes", () => {
  it("stores a copy of the caller's bytes", () => {
    const s = new KVStore();
    const key = b("k");
    const value = b("v");
    s.put(key, value);
    key[0] = 0x78;
    value[0] = 0x78;
    expect(get(s, "k")?.value).toBe("v");
  });
});

describe("KVStore restore", () => {
  it("rebuilds index, revision and lease attachments from backend records", () => {
    const clock = new FakeClock();
    const lessor = new Lessor({ clock });
    const s = new KVStore({ lessor });
    ok(lessor.grant(5, 60));
    s.put(b("a"), b("1"));
    s.put(b("a"), b("2"), 5);
    s.put(b("b"), b("1"));
    s.deleteRange(b("b"));
    s.put(b("c"), b("1"));
    ok(s.compact(4));

    const lessor2 = new Lessor({ clock });
    ok(lessor2.grant(5, 60));
    const r = new KVStore({ lessor: lessor2 });
    r.restore(s.backend.all(), s.compactRev());
    expect(r.rev()).toBe(s.rev());
    expect(r.compactRev()).toBe(4);
    for (const rev of [4, 5, 6]) {
      expect(ok(r.range(b("a"), zero, { rev }))).toEqual(ok(s.range(b("a"), zero, { rev })));
    }
    expect(r.range(b("a"), zero, { rev: 3 })).toBe(ErrCompacted);
    expect(lessor2.getLease(b("a"))).toBe(5);
    // writes continue from the restored revision, versions included
    expect(r.put(b("a"), b("3"))).toBe(7);
    expect(get(r, "a")).toEqual({ key: "a", value: "3", create: 2, mod: 7, version: 3 });
  });
});
