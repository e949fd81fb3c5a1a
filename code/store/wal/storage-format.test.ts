import { describe, expect, it } from "vitest";
import type { Commit } from "../mvcc/kvstore.ts";
import { tombstoneKeyValue } from "../mvccpb/kv.ts";
import { toBytes } from "../pkg/bytes.ts";
import {
  decodeCommit,
  decodeState,
  encodeCommit,
  encodeState,
  StorageError,
  type StoreState,
} from "./storage-format.ts";

const b = toBytes;
// Keys and values are bytes, not text: include every byte value, invalid UTF-8 among them.
const allBytes = new Uint8Array(Array.from({ length: 256 }, (_, i) => i));
const put = { key: allBytes, value: b("v"), createRevision: 3, modRevision: 7, version: 2, lease: 0 };

describe("storage format: WAL records", () => {
  const commits: Commit[] = [
    { type: "txn", rev: 7, changes: [put, tombstoneKeyValue(b("/lock"))] },
    { type: "leaseGrant", rev: 7, id: 2 ** 52 + 1, ttl: 60 },
    {
      type: "leaseRevoke",
      rev: 8,
      id: 434782,
      changes: [tombstoneKeyValue(b("a")), tombstoneKeyValue(b("b"))],
    },
    { type: "leaseRevoke", rev: 8, id: 5, changes: [] },
    { type: "compaction", rev: 8, compactRev: 6 },
  ];

  it("gives back every kind of commit exactly", () => {
    for (const commit of commits) expect(decodeCommit(encodeCommit(commit))).toEqual(commit);
  });

  it("lays a record out as the header says: version, type, rev, then each change", () => {
    const le = (n: number, bytes: number) =>
      Array.from({ length: bytes }, (_, i) => Math.floor(n / 256 ** i) % 256);
    expect([...encodeCommit({ type: "txn", rev: 7, changes: [{ ...put, key: b("/a") }] })]).toEqual([
      2, // format version
      1, // txn
      ...le(7, 8), // rev
      ...le(1, 4), // one change
      0, // a put
      ...le(2, 4),
      ...b("/a"), // key
      ...le(3, 8), // createRevision
      ...le(7, 8), // modRevision
      ...le(2, 8), // version
      ...le(0, 8), // lease
      ...le(1, 4),
      ...b("v"), // value
    ]);
    expect([...encodeCommit({ type: "compaction", rev: 8, compactRev: 6 })]).toEqual([
      2,
      4,
      ...le(8, 8),
      ...le(6, 8),
    ]);
    expect([...encodeCommit({ type: "txn", rev: 9, changes: [tombstoneKeyValue(b("k"))] })]).toEqual([
      2,
      1,
      ...le(9, 8),
      ...le(1, 4),
      1, // a deletion: only its key
      ...le(1, 4),
      ...b("k"),
    ]);
  });

  it("returns what is wrong with a payload instead of throwing", () => {
    const reason = (bytes: Uint8Array) => {
      const d = decodeCommit(bytes);
      return d instanceof StorageError ? d.message : "decoded";
    };
    const good = encodeCommit(commits[0]);
    expect(reason(good)).toBe("decoded");
    // Every proper prefix ends inside a field.
    for (let n = 0; n < good.length; n++) {
      expect(reason(good.subarray(0, n))).toMatch(
        /^storage: (invalid record: the payload ends at byte|invalid record: the count \d+ at byte \d+ exceeds the payload|unsupported version)/,
      );
    }
    expect(reason(Uint8Array.of(...good, 0))).toMatch(/1 bytes follow the last field/);
    expect(reason(b('{"v":1,"type":"txn","rev":1,"changes":[]}'))).toMatch(
      /^storage: unsupported version: the data was written in format version 1 \(JSON\); this etcd reads version 2/,
    );
    const withType = (type: number) => Uint8Array.of(2, type, ...new Uint8Array(8));
    expect(reason(withType(9))).toMatch(/unknown record type 9 at byte 1/);
    const badKind = encodeCommit({ type: "txn", rev: 7, changes: [tombstoneKeyValue(b("k"))] });
    badKind[14] = 7; // the change's kind
    expect(reason(badKind)).toMatch(/unknown change kind 7 at byte 14/);
    const tooBig = encodeCommit({ type: "compaction", rev: 8, compactRev: 6 });
    tooBig[9] = 0x01; // the top byte of rev: 2^56
    expect(reason(tooBig)).toMatch(/the number at byte 2 exceeds 2\^53/);
    const hugeCount = encodeCommit({ type: "txn", rev: 7, changes: [] });
    hugeCount.set([0xff, 0xff, 0xff, 0x7f], 10);
    expect(reason(hugeCount)).toMatch(/the count 2147483647 at byte 10 exceeds the payload/);
  });
});

describe("storage format: snapshots", () => {
  const state: StoreState = {
    rev: 9,
    compactRev: 6,
    records: [
      {
        rev: { main: 5, sub: 0 },
        tombstone: false,
        kv: { ...put, createRevision: 5, modRevision: 5, version: 1 },
      },
      { rev: { main: 9, sub: 0 }, tombstone: true, kv: tombstoneKeyValue(allBytes) },
      {
        rev: { main: 9, sub: 1 },
        tombstone: false,
        kv: { ...put, key: b("k"), modRevision: 9, lease: 434782 },
      },
    ],
    leases: [{ id: 434782, ttl: 60 }],
  };

  it("gives back the whole state exactly, history and leases included", () => {
    expect(decodeState(encodeState(state))).toEqual(state);
    expect(decodeState(encodeState({ rev: 1, compactRev: -1, records: [], leases: [] }))).toEqual({
      rev: 1,
      compactRev: -1,
      records: [],
      leases: [],
    });
  });

  it("refuses a snapshot that is not one", () => {
    const bytes = encodeState(state);
    const d = decodeState(bytes.subarray(0, bytes.length - 1));
    expect(d).toBeInstanceOf(StorageError);
    expect((d as StorageError).message).toMatch(
      /^storage: invalid snapshot: the payload ends at byte \d+, inside a field that starts at byte \d+/,
    );
    expect(decodeState(b('{"v":1,"rev":3,"compactRev":-1,"leases":[],"records":[]}'))).toMatchObject({
      reason: "storage: unsupported version",
    });
  });
});
