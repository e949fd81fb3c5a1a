import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { applyTxn } from "../../../code/store/etcdserver/apply.ts";
import { ErrRevisionNotFound, KeyIndex } from "../../../code/store/mvcc/key-index.ts";
import { KVStore } from "../../../code/store/mvcc/kvstore.ts";
import { RevisionSet, revision } from "../../../code/store/mvcc/revision.ts";
import type { KeyValue } from "../../../code/store/mvccpb/kv.ts";
import { toBytes, toText } from "../../../code/store/pkg/bytes.ts";
import { findGeneration, getAtRev } from "./key-index-get.ts";

const b = toBytes;

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

/** etcd's example from key_index.go: put@1, put@2, delete@3, put@4, delete@5. */
function etcdExample(): KeyIndex {
  const ki = new KeyIndex(b("foo"));
  ki.put(1, 0);
  ki.put(2, 0);
  ki.tombstone(3, 0);
  ki.put(4, 0);
  ki.tombstone(5, 0);
  return ki; // generations: [ {1, 2, 3(t)}, {4, 5(t)}, {} ]
}

describe("findGeneration", () => {
  it("finds the generation alive at each revision of etcd's example", () => {
    const ki = etcdExample();
    const [first, second] = ki.generations;
    expect(findGeneration(ki.generations, 0)).toBeUndefined(); // before the first creation
    expect(findGeneration(ki.generations, 1)).toBe(first);
    expect(findGeneration(ki.generations, 2)).toBe(first);
    expect(findGeneration(ki.generations, 4)).toBe(second);
  });

  it("finds no generation at a deletion's own revision, nor after it until the key is created again", () => {
    const ki = etcdExample();
    expect(findGeneration(ki.generations, 3)).toBeUndefined(); // deleted at 3
    expect(findGeneration(ki.generations, 5)).toBeUndefined(); // deleted at 5
    expect(findGeneration(ki.generations, 99)).toBeUndefined();
  });

  it("finds the open generation of a live key at any revision from its creation on", () => {
    const ki = new KeyIndex(b("k"));
    ki.put(3, 0);
    ki.put(7, 0);
    expect(findGeneration(ki.generations, 2)).toBeUndefined();
    for (const rev of [3, 5, 7, 1000]) expect(findGeneration(ki.generations, rev)).toBe(ki.generations[0]);
  });

  it("skips the gap between a deletion and the next creation", () => {
    const ki = new KeyIndex(b("k"));
    ki.put(2, 0);
    ki.tombstone(4, 0);
    ki.put(8, 0);
    expect(findGeneration(ki.generations, 3)).toBe(ki.generations[0]);
    expect(findGeneration(ki.generations, 4)).toBeUndefined();
    expect(findGeneration(ki.generations, 7)).toBeUndefined();
    expect(findGeneration(ki.generations, 8)).toBe(ki.generations[1]);
  });
});

describe("getAtRev", () => {
  it("answers etcd's example at every revision", () => {
    const g = etcdExample().generations;
    expect(getAtRev(g, 0)).toBe(ErrRevisionNotFound);
    expect(getAtRev(g, 1)).toEqual({ modified: revision(1), created: revision(1), version: 1 });
    expect(getAtRev(g, 2)).toEqual({ modified: revision(2), created: revision(1), version: 2 });
    expect(getAtRev(g, 3)).toBe(ErrRevisionNotFound);
    expect(getAtRev(g, 4)).toEqual({ modified: revision(4), created: revision(4), version: 1 });
    expect(getAtRev(g, 5)).toBe(ErrRevisionNotFound);
    expect(getAtRev(g, 6)).toBe(ErrRevisionNotFound);
  });

  it("returns the newest change at or before the revision, between two changes too", () => {
    const ki = new KeyIndex(b("k"));
    ki.put(2, 0);
    ki.put(5, 0);
    ki.put(9, 0);
    expect(getAtRev(ki.generations, 4)).toEqual({ modified: revision(2), created: revision(2), version: 1 });
    expect(getAtRev(ki.generations, 8)).toEqual({ modified: revision(5), created: revision(2), version: 2 });
    expect(getAtRev(ki.generations, 50)).toEqual({ modified: revision(9), created: revision(2), version: 3 });
  });

  it("sees the last change a transaction made when it changed the key twice (the highest sub)", () => {
    const ki = new KeyIndex(b("k"));
    ki.put(2, 0);
    ki.put(2, 1);
    ki.put(3, 0);
    expect(getAtRev(ki.generations, 2)).toEqual({
      modified: revision(2, 1),
      created: revision(2),
      version: 2,
    });
  });

  it("starts version and created over after a re-creation", () => {
    const ki = new KeyIndex(b("k"));
    ki.put(2, 0);
    ki.put(3, 0);
    ki.put(4, 0);
    ki.tombstone(5, 0);
    ki.put(6, 0);
    ki.put(7, 0);
    expect(getAtRev(ki.generations, 4)).toEqual({ modified: revision(4), created: revision(2), version: 3 });
    expect(getAtRev(ki.generations, 6)).toEqual({ modified: revision(6), created: revision(6), version: 1 });
    expect(getAtRev(ki.generations, 7)).toEqual({ modified: revision(7), created: revision(6), version: 2 });
  });

  it("keeps version and created right after compaction removed the older revisions", () => {
    const ki = new KeyIndex(b("k"));
    for (const rev of [2, 3, 4, 5]) ki.put(rev, 0);
    ki.compact(4, new RevisionSet()); // keeps {4, 5}; the generation still counts 4 changes
    expect(ki.generations[0].revs.map((r) => r.main)).toEqual([4, 5]);
    expect(getAtRev(ki.generations, 4)).toEqual({ modified: revision(4), created: revision(2), version: 3 });
    expect(getAtRev(ki.generations, 5)).toEqual({ modified: revision(5), created: revision(2), version: 4 });
  });
});

describe("inside the real store: every read, put and compare goes through your getAtRev", () => {
  // KeyIndex.get is what the store's index calls for each key; here it calls your function.
  beforeEach(() => {
    vi.spyOn(KeyIndex.prototype, "get").mockImplementation(function (this: KeyIndex, atRev: number) {
      return getAtRev(this.generations, atRev);
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const show = (kvs: KeyValue[]) =>
    kvs.map((kv) => `${toText(kv.key)}=${toText(kv.value)} create=${kv.createRevision} ver=${kv.version}`);

  function at(store: KVStore, key: string, rev: number): string[] {
    return show(ok(store.range(b(key), undefined, { rev })).kvs);
  }

  it("reads a key at each revision of its history", () => {
    const store = new KVStore();
    ok(store.put(b("a"), b("1"))); // 2
    ok(store.put(b("a"), b("2"))); // 3
    ok(store.deleteRange(b("a"))); // 4
    ok(store.put(b("a"), b("3"))); // 5
    expect(at(store, "a", 1)).toEqual([]);
    expect(at(store, "a", 2)).toEqual(["a=1 create=2 ver=1"]);
    expect(at(store, "a", 3)).toEqual(["a=2 create=2 ver=2"]);
    expect(at(store, "a", 5)).toEqual(["a=3 create=5 ver=1"]);
  });

  it("reads nothing at the deletion's own revision", () => {
    const store = new KVStore();
    ok(store.put(b("a"), b("1"))); // 2
    ok(store.put(b("b"), b("1"))); // 3
    ok(store.deleteRange(b("a"))); // 4
    expect(at(store, "a", 4)).toEqual([]);
    const all = ok(store.range(b("a"), b("z"), { rev: 4 }));
    expect(show(all.kvs)).toEqual(["b=1 create=3 ver=1"]);
    expect(all.count).toBe(1);
  });

  it("a put gets create_revision and version from the key's history: a re-created key starts over", () => {
    const store = new KVStore();
    for (const v of ["1", "2", "3"]) ok(store.put(b("k"), b(v))); // 2, 3, 4
    ok(store.deleteRange(b("k"))); // 5
    ok(store.put(b("k"), b("again"))); // 6
    ok(store.put(b("k"), b("again2"))); // 7
    expect(at(store, "k", 4)).toEqual(["k=3 create=2 ver=3"]);
    expect(at(store, "k", 7)).toEqual(["k=again2 create=6 ver=2"]);
  });

  it("a txn that deletes and re-creates a key gives it a new create_revision and version 1", () => {
    const store = new KVStore();
    ok(store.put(b("k"), b("old"))); // 2
    ok(store.put(b("k"), b("old2"))); // 3
    const resp = ok(
      applyTxn(store, {
        success: [{ requestDeleteRange: { key: b("k") } }, { requestPut: { key: b("k"), value: b("new") } }],
      }),
    ); // 4: delete at 4.0, put at 4.1
    expect(resp.header.revision).toBe(4);
    expect(at(store, "k", 4)).toEqual(["k=new create=4 ver=1"]);
  });

  it("a txn that puts one key twice stores version 2 and is read as its last value", () => {
    const store = new KVStore();
    ok(
      applyTxn(store, {
        success: [
          { requestPut: { key: b("k"), value: b("first") } },
          { requestPut: { key: b("k"), value: b("second") } },
        ],
      }),
    ); // 2: puts at 2.0 and 2.1
    expect(at(store, "k", 2)).toEqual(["k=second create=2 ver=2"]);
  });

  it("keeps counting versions after compaction", () => {
    const store = new KVStore();
    for (const v of ["1", "2", "3"]) ok(store.put(b("k"), b(v))); // 2, 3, 4
    ok(store.compact(3)); // revision 2 is gone from the key's history
    ok(store.put(b("k"), b("4"))); // 5
    expect(at(store, "k", 3)).toEqual(["k=2 create=2 ver=2"]);
    expect(at(store, "k", 5)).toEqual(["k=4 create=2 ver=4"]);
  });

  it('"create only if absent" (version = 0) holds again once the key was deleted', () => {
    const store = new KVStore();
    const createIfAbsent = (value: string) =>
      ok(
        applyTxn(store, {
          compare: [{ key: b("lock"), target: "VERSION", result: "EQUAL", version: 0 }],
          success: [{ requestPut: { key: b("lock"), value: b(value) } }],
        }),
      ).succeeded;
    expect(createIfAbsent("me")).toBe(true);
    expect(createIfAbsent("you")).toBe(false);
    ok(store.deleteRange(b("lock")));
    expect(createIfAbsent("you")).toBe(true);
    expect(at(store, "lock", store.rev())).toEqual([`lock=you create=${store.rev()} ver=1`]);
  });
});
