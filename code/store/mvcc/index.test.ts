import { describe, expect, it } from "vitest";
import { compareBytes, toBytes, toText } from "../pkg/bytes.ts";
import { inRange, keyRange, prefixEnd, TreeIndex } from "./index.ts";
import { ErrRevisionNotFound } from "./key-index.ts";
import { revision } from "./revision.ts";

const b = toBytes;
const zero = new Uint8Array([0]);

function keysOf(r: { keys: Uint8Array[] }): string[] {
  return r.keys.map(toText);
}

describe("keyRange (etcd's range_end conventions)", () => {
  it("decodes empty, '\\0' and [key, end)", () => {
    expect(keyRange(b("a")).kind).toBe("single");
    expect(keyRange(b("a"), new Uint8Array()).kind).toBe("single");
    expect(keyRange(b("a"), zero).kind).toBe("from");
    expect(keyRange(b("a"), b("c")).kind).toBe("between");
  });

  it("inRange follows each kind", () => {
    expect(inRange(keyRange(b("a")), b("a"))).toBe(true);
    expect(inRange(keyRange(b("a")), b("ab"))).toBe(false);
    expect(inRange(keyRange(b("b"), zero), b("zzz"))).toBe(true);
    expect(inRange(keyRange(b("b"), zero), b("a"))).toBe(false);
    expect(inRange(keyRange(b("a"), b("c")), b("c"))).toBe(false);
    expect(inRange(keyRange(b("a"), b("c")), b("bzz"))).toBe(true);
  });
});

describe("prefixEnd (clientv3 GetPrefixRangeEnd)", () => {
  it("increments the last byte below 0xff, dropping trailing 0xff", () => {
    expect(toText(prefixEnd(b("/registry/pods/")))).toBe("/registry/pods0");
    expect([...prefixEnd(new Uint8Array([0x61, 0xff, 0xff]))]).toEqual([0x62]);
    expect([...prefixEnd(new Uint8Array([0x01, 0xfe]))]).toEqual([0x01, 0xff]);
  });
  it("all-0xff or empty prefixes mean every key ('\\0')", () => {
    expect([...prefixEnd(new Uint8Array([0xff, 0xff]))]).toEqual([0]);
    expect([...prefixEnd(new Uint8Array())]).toEqual([0]);
  });
  it("does not change its argument", () => {
    const p = b("ab");
    prefixEnd(p);
    expect(toText(p)).toBe("ab");
  });
});

describe("TreeIndex", () => {
  function build(): TreeIndex {
    const ti = new TreeIndex();
    ti.put(b("foo"), revision(2));
    ti.put(b("foo1"), revision(3));
    ti.put(b("foo2"), revision(4));
    ti.put(b("bar"), revision(5));
    ti.put(b("foo"), revision(6));
    ti.tombstone(b("foo1"), revision(7));
    return ti;
  }

  it("orders keys byte-wise, not by JS string order", () => {
    const ti = new TreeIndex();
    // U+FFFF is above U+10000's first UTF-16 unit in JS order, but its UTF-8 bytes sort lower.
    const keys = [b("\u{10000}"), b("\uffff"), new Uint8Array([0x7a]), new Uint8Array([0xff, 0x00]), b("a")];
    for (const [i, k] of keys.entries()) ti.put(k, revision(i + 2));
    const got = ti.range(new Uint8Array([0]), zero, 100).keys;
    const want = [...keys].sort(compareBytes);
    expect(got).toEqual(want);
    expect(toText(got[2])).toBe("\uffff"); // EF BF BF < F0 90 80 80
  });

  it("range at a revision: single key, [key, end), and from key", () => {
    const ti = build();
    expect(keysOf(ti.range(b("foo"), undefined, 7))).toEqual(["foo"]);
    expect(ti.range(b("foo"), undefined, 7).revs).toEqual([revision(6)]);
    expect(ti.range(b("foo"), undefined, 5).revs).toEqual([revision(2)]);
    expect(keysOf(ti.range(b("foo"), b("foo3"), 7))).toEqual(["foo", "foo2"]);
    expect(keysOf(ti.range(b("foo"), b("foo3"), 6))).toEqual(["foo", "foo1", "foo2"]);
    expect(keysOf(ti.range(b("a"), zero, 7))).toEqual(["bar", "foo", "foo2"]);
    expect(keysOf(ti.range(b("foo"), b("a"), 7))).toEqual([]); // end ≤ key: empty
    expect(keysOf(ti.range(b("nope"), undefined, 7))).toEqual([]);
  });

  it("revisions: limit bounds the list, total counts every match", () => {
    const ti = build();
    expect(ti.revisions(b("a"), zero, 7, 2)).toEqual({ revs: [revision(5), revision(6)], total: 3 });
    expect(ti.revisions(b("a"), zero, 7, 0).revs).toHaveLength(3);
    expect(ti.countRevisions(b("foo"), prefixEnd(b("foo")), 6)).toBe(3);
    expect(ti.countRevisions(b("foo"), prefixEnd(b("foo")), 7)).toBe(2);
  });

  it("get reports missing keys", () => {
    const ti = build();
    expect(ti.get(b("zzz"), 7)).toBe(ErrRevisionNotFound);
    expect(ti.get(b("foo1"), 7)).toBe(ErrRevisionNotFound);
    expect(ti.tombstone(b("zzz"), revision(8))).toBe(ErrRevisionNotFound);
  });

  it("rangeSince lists every change in revision order", () => {
    const ti = build();
    expect(ti.rangeSince(b("a"), zero, 3).map((r) => r.main)).toEqual([3, 4, 5, 6, 7]);
    expect(ti.rangeSince(b("foo1"), undefined, 0).map((r) => r.main)).toEqual([3, 7]);
  });

  it("compact drops keys deleted before the compaction revision", () => {
    const ti = build();
    const keep = ti.compact(7);
    // foo1 was deleted at 7 = the compaction revision: its tombstone is kept
    expect(keep.toArray().map((r) => r.main)).toEqual([4, 5, 6, 7]);
    expect(ti.size).toBe(4);
    ti.put(b("x"), revision(8));
    const keep2 = ti.compact(8);
    expect(keep2.toArray().map((r) => r.main)).toEqual([4, 5, 6, 8]);
    expect(ti.all().map((ki) => toText(ki.key))).toEqual(["bar", "foo", "foo2", "x"]);
  });
});
