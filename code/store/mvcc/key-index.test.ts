import { describe, expect, it } from "vitest";
import { toBytes } from "../pkg/bytes.ts";
import { Panic } from "../rpctypes/error.ts";
import { ErrRevisionNotFound, KeyIndex } from "./key-index.ts";
import { RevisionSet, revision } from "./revision.ts";

/** etcd's example from key_index.go: put(1.0); put(2.0); tombstone(3.0); put(4.0); tombstone(5.0). */
function example(): KeyIndex {
  const ki = new KeyIndex(toBytes("foo"));
  ki.put(1, 0);
  ki.put(2, 0);
  ki.tombstone(3, 0);
  ki.put(4, 0);
  ki.tombstone(5, 0);
  return ki;
}

function revsOf(ki: KeyIndex): number[][] {
  return ki.generations.map((g) => g.revs.map((r) => r.main));
}

describe("KeyIndex", () => {
  it("groups revisions into generations closed by tombstones", () => {
    expect(revsOf(example())).toEqual([[1, 2, 3], [4, 5], []]);
  });

  it("get: modified, created and version at each revision; missing between generations", () => {
    const ki = example();
    expect(ki.get(0)).toBe(ErrRevisionNotFound);
    expect(ki.get(1)).toEqual({ modified: revision(1), created: revision(1), version: 1 });
    expect(ki.get(2)).toEqual({ modified: revision(2), created: revision(1), version: 2 });
    expect(ki.get(3)).toBe(ErrRevisionNotFound); // deleted at 3
    // re-created at 4: version starts over, create revision is 4
    expect(ki.get(4)).toEqual({ modified: revision(4), created: revision(4), version: 1 });
    expect(ki.get(5)).toBe(ErrRevisionNotFound);
    expect(ki.get(100)).toBe(ErrRevisionNotFound);
  });

  it("tombstone on a deleted key is not a change", () => {
    const ki = example();
    expect(ki.tombstone(6, 0)).toBe(ErrRevisionNotFound);
    expect(ki.modified).toEqual(revision(5));
  });

  it("refuses a revision that does not grow", () => {
    const ki = example();
    expect(() => ki.put(5, 0)).toThrow(Panic);
  });

  it("since: revisions from rev on, one per main revision (the last sub wins)", () => {
    const ki = new KeyIndex(toBytes("k"));
    ki.put(2, 0);
    ki.put(2, 1);
    ki.put(3, 0);
    ki.tombstone(4, 0);
    ki.put(6, 0);
    expect(ki.since(0)).toEqual([revision(2, 1), revision(3), revision(4), revision(6)]);
    expect(ki.since(3)).toEqual([revision(3), revision(4), revision(6)]);
    expect(ki.since(5)).toEqual([revision(6)]);
    expect(ki.since(7)).toEqual([]);
  });

  // The four compactions etcd documents on keyIndex, applied one after the other.
  it("compact keeps the newest revision ≤ atRev and drops finished generations", () => {
    const ki = example();
    const avail = new RevisionSet();
    ki.compact(2, avail);
    expect(revsOf(ki)).toEqual([[2, 3], [4, 5], []]);
    expect(avail.toArray()).toEqual([revision(2)]);

    ki.compact(4, new RevisionSet());
    expect(revsOf(ki)).toEqual([[4, 5], []]);

    const at5 = new RevisionSet();
    ki.compact(5, at5);
    // the tombstone at exactly 5 stays: a read at 5 must still see "deleted"
    expect(revsOf(ki)).toEqual([[5], []]);
    expect(at5.toArray()).toEqual([revision(5)]);
    expect(ki.get(5)).toBe(ErrRevisionNotFound);

    const at6 = new RevisionSet();
    ki.compact(6, at6);
    expect(revsOf(ki)).toEqual([[]]);
    expect(at6.size).toBe(0);
    expect(ki.isEmpty()).toBe(true);
  });

  it("compact at a revision that deleted the key and created it again keeps the new value", () => {
    // Found by differential.test.ts (seed 91): a txn deleting from "b/y" on, then putting "d",
    // then a compaction at that revision — the backend dropped d's value while the index kept
    // pointing at it ("range failed to find revision pair 71.2").
    const ki = new KeyIndex(toBytes("d"));
    ki.put(3, 0);
    ki.tombstone(4, 0);
    ki.put(4, 1);
    const avail = new RevisionSet();
    ki.compact(4, avail);
    expect(avail.toArray()).toEqual([revision(4, 1)]);
    expect(ki.generations.map((g) => g.revs)).toEqual([[revision(4, 1)]]);
    expect(ki.get(4)).toEqual({ modified: revision(4, 1), created: revision(4, 1), version: 1 });
  });

  it("compact keeps versions right for later reads", () => {
    const ki = new KeyIndex(toBytes("k"));
    for (let r = 1; r <= 5; r++) ki.put(r, 0);
    ki.compact(4, new RevisionSet());
    expect(revsOf(ki)).toEqual([[4, 5]]);
    expect(ki.get(5)).toEqual({ modified: revision(5), created: revision(1), version: 5 });
    expect(ki.get(4)).toEqual({ modified: revision(4), created: revision(1), version: 4 });
  });

  it("keep reports what compact would keep, without the tombstone at atRev", () => {
    const ki = example();
    const k2 = new RevisionSet();
    ki.keep(2, k2);
    expect(k2.toArray()).toEqual([revision(2)]);
    const k5 = new RevisionSet();
    ki.keep(5, k5);
    expect(k5.size).toBe(0);
    expect(revsOf(ki)).toEqual([[1, 2, 3], [4, 5], []]); // untouched
  });

  it("restore rebuilds from the newest stored record", () => {
    const ki = new KeyIndex(toBytes("k"));
    ki.restore(revision(3), revision(7), 4);
    ki.put(8, 0);
    expect(ki.get(8)).toEqual({ modified: revision(8), created: revision(3), version: 5 });
    const t = new KeyIndex(toBytes("t"));
    t.restoreTombstone(9, 0);
    expect(t.get(9)).toBe(ErrRevisionNotFound);
    t.put(10, 0);
    expect(t.get(10)).toEqual({ modified: revision(10), created: revision(10), version: 1 });
  });
});
