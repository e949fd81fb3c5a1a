import { describe, expect, it } from "vitest";
import { toBytes, toText } from "../pkg/bytes.ts";
import { KVStore } from "./kvstore.ts";
import { ErrCompacted, ErrFutureRev } from "./kvstore-txn.ts";

const b = toBytes;
const zero = new Uint8Array([0]);

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

/** a@2 a@3 b@4 del b@5 c@6 del a@7 c@8 */
function history(): KVStore {
  const s = new KVStore();
  s.put(b("a"), b("a2"));
  s.put(b("a"), b("a3"));
  s.put(b("b"), b("b4"));
  s.deleteRange(b("b"));
  s.put(b("c"), b("c6"));
  s.deleteRange(b("a"));
  s.put(b("c"), b("c8"));
  return s;
}

function stored(s: KVStore): string[] {
  return s.backend.all().map((r) => `${r.rev.main}:${toText(r.kv.key)}${r.tombstone ? "(t)" : ""}`);
}

describe("compaction", () => {
  it("keeps the newest revision ≤ rev of each live key and drops older history", () => {
    const s = history();
    const res = ok(s.compact(6));
    // a: 3 is its value at 6; b: deleted at 5 < 6, gone with its tombstone; c: 6
    expect(stored(s)).toEqual(["3:a", "6:c", "7:a(t)", "8:c"]);
    expect(res).toEqual({ kept: 2, removed: 3 }); // a@2, b@4, b@5(t)
    expect(s.index.all().map((ki) => toText(ki.key))).toEqual(["a", "c"]);
  });

  it("a tombstone exactly at the compaction revision is kept", () => {
    const s = history();
    ok(s.compact(7));
    expect(stored(s)).toEqual(["6:c", "7:a(t)", "8:c"]);
    expect(ok(s.range(b("a"), zero, { rev: 7 })).kvs.map((kv) => toText(kv.key))).toEqual(["c"]);
    ok(s.compact(8));
    expect(stored(s)).toEqual(["8:c"]);
    expect(s.index.all().map((ki) => toText(ki.key))).toEqual(["c"]);
  });

  it("reads at the compaction revision or later work; earlier ones fail", () => {
    const s = history();
    const before = ok(s.range(b("a"), zero, { rev: 6 }));
    ok(s.compact(6));
    expect(ok(s.range(b("a"), zero, { rev: 6 }))).toEqual(before);
    expect(s.range(b("a"), zero, { rev: 5 })).toBe(ErrCompacted);
    expect(ok(s.range(b("a"), zero)).kvs.map((kv) => toText(kv.value))).toEqual(["c8"]);
    // versions and create revisions survive compaction
    expect(ok(s.range(b("c"))).kvs[0]).toMatchObject({ createRevision: 6, modRevision: 8, version: 2 });
  });

  it("refuses a revision already compacted, and a future one", () => {
    const s = history();
    expect(s.compact(9)).toBe(ErrFutureRev);
    ok(s.compact(5));
    expect(s.compact(5)).toBe(ErrCompacted);
    expect(s.compact(4)).toBe(ErrCompacted);
    expect(ErrCompacted.message).toBe("mvcc: required revision has been compacted");
    expect(ErrCompacted.grpcMessage).toBe("etcdserver: mvcc: required revision has been compacted");
    expect(ErrCompacted.code).toBe("OutOfRange");
    ok(s.compact(8)); // compacting at the current revision is allowed
    expect(s.rev()).toBe(8); // compaction does not change the revision
  });
});
