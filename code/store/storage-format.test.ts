import { describe, expect, it } from "vitest";
import { toBytes, toText } from "./bytes.ts";
import { tombstoneKeyValue } from "./kv.ts";
import type { Commit } from "./kvstore.ts";
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

  it("is JSON a learner can read", () => {
    expect(toText(encodeCommit({ type: "txn", rev: 7, changes: [{ ...put, key: b("/a") }] }))).toBe(
      '{"v":1,"type":"txn","rev":7,"changes":[{"key":"L2E=","value":"dg==","createRevision":3,"modRevision":7,"version":2,"lease":0}]}',
    );
    expect(toText(encodeCommit({ type: "compaction", rev: 8, compactRev: 6 }))).toBe(
      '{"v":1,"type":"compaction","rev":8,"compactRev":6}',
    );
  });

  it("returns what is wrong with a payload instead of throwing", () => {
    const reason = (text: string) => {
      const d = decodeCommit(b(text));
      return d instanceof StorageError ? d.message : "decoded";
    };
    expect(reason("{not json")).toMatch(/^storage: invalid record: not JSON/);
    expect(reason('{"v":2,"type":"txn","rev":1,"changes":[]}')).toMatch(
      /^storage: unsupported version: the data was written in format version 2; this etcd reads version 1/,
    );
    expect(reason('{"v":1,"type":"nope","rev":1}')).toMatch(/unknown record type "nope"/);
    expect(reason('{"v":1,"type":"txn","rev":-1,"changes":[]}')).toMatch(
      /"rev" must be a non-negative integer/,
    );
    expect(reason('{"v":1,"type":"txn","rev":1,"changes":[{"key":"YQ=="}]}')).toMatch(
      /change 0: a put needs/,
    );
    expect(reason('{"v":1,"type":"leaseGrant","rev":1,"id":1.5,"ttl":3}')).toMatch(
      /"id" and "ttl" must be integers/,
    );
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
    const d = decodeState(
      b('{"v":1,"rev":3,"compactRev":-1,"leases":[],"records":[{"key":"YQ==","tombstone":true}]}'),
    );
    expect(d).toBeInstanceOf(StorageError);
    expect((d as StorageError).message).toBe(
      'storage: invalid snapshot: record 0 needs an integer "main" and "sub"',
    );
  });
});
