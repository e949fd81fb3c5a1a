import { describe, expect, it } from "vitest";
import { compareBytes } from "../pkg/bytes.ts";
import {
  bytesToRev,
  compareRevisions,
  isTombstone,
  RevisionSet,
  revGreaterThan,
  revision,
  revToBytes,
} from "./revision.ts";

describe("revision", () => {
  it("orders by main, then sub", () => {
    expect(revGreaterThan(revision(2, 0), revision(1, 9))).toBe(true);
    expect(revGreaterThan(revision(2, 1), revision(2, 0))).toBe(true);
    expect(revGreaterThan(revision(2, 0), revision(2, 0))).toBe(false);
    const sorted = [revision(3, 0), revision(1, 1), revision(1, 0)].sort(compareRevisions);
    expect(sorted).toEqual([revision(1, 0), revision(1, 1), revision(3, 0)]);
  });

  it("encodes to 17 bytes whose byte order is the revision order", () => {
    const revs = [
      revision(1, 0),
      revision(1, 1),
      revision(2, 0),
      revision(255, 0),
      revision(256, 3),
      revision(70000, 0),
    ];
    const encoded = revs.map((r) => revToBytes(r));
    for (const e of encoded) expect(e.length).toBe(17);
    for (let i = 1; i < encoded.length; i++) expect(compareBytes(encoded[i - 1], encoded[i])).toBeLessThan(0);
    expect(encoded.map(bytesToRev)).toEqual(revs);
  });

  it("marks tombstones with a trailing 't'", () => {
    const t = revToBytes(revision(5, 2), true);
    expect(t.length).toBe(18);
    expect(t[17]).toBe("t".charCodeAt(0));
    expect(isTombstone(t)).toBe(true);
    expect(isTombstone(revToBytes(revision(5, 2)))).toBe(false);
    expect(bytesToRev(t)).toEqual(revision(5, 2));
  });

  it("RevisionSet compares by value", () => {
    const s = new RevisionSet();
    s.add(revision(4, 1));
    expect(s.has({ main: 4, sub: 1 })).toBe(true);
    expect(s.has(revision(4, 0))).toBe(false);
    s.add(revision(2, 0));
    expect(s.toArray()).toEqual([revision(2, 0), revision(4, 1)]);
    s.delete(revision(4, 1));
    expect(s.size).toBe(1);
  });
});
