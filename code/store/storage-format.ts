/**
 * Storage format — the bytes that storage writes: one WAL record per commit, and one snapshot
 * payload holding the whole store.
 * Mirrors etcd-io/etcd api/etcdserverpb/raft_internal.proto.
 *
 * Solves:
 * - a commit (kvstore.ts, `Commit`) must become bytes the WAL can keep and come back exactly after
 *   a restart, although keys and values are arbitrary bytes: they are written in base64;
 * - a learner, or an operator looking at a damaged data directory, should be able to read what
 *   is on disk: JSON, one object per record, with the store's own field names;
 * - the format will change as the course grows: every payload starts with its version `v`, and
 *   a version this code does not know stops the start instead of being misread.
 *
 * A WAL record (the payload of one frame; wal-record.ts adds the length, checksum and revision):
 *
 *   {"v":1,"type":"txn","rev":7,"changes":[
 *     {"key":"L3JlZ2lzdHJ5L3BvZHMvd2Vi","value":"djI=","createRevision":5,"modRevision":7,"version":2,"lease":0},
 *     {"key":"L2xvY2s=","tombstone":true}]}
 *   {"v":1,"type":"leaseGrant","rev":7,"id":434782,"ttl":60}
 *   {"v":1,"type":"leaseRevoke","rev":8,"id":434782,"changes":[{"key":"L2xvY2s=","tombstone":true}]}
 *   {"v":1,"type":"compaction","rev":8,"compactRev":6}
 *
 * A "txn" is any write transaction that changed keys — a Put, a DeleteRange or a Txn — with its
 * changes in sub-revision order, all at `rev`; revoking a lease (by a client, or on expiry) is a
 * "leaseRevoke", whose changes delete the lease's keys. A change's revisions and version are not
 * needed to redo it — replay recomputes them — but they are kept, so that replay can check that it
 * rebuilt exactly what was committed.
 *
 * A snapshot (the payload of a .snap file; snapshot.ts adds the checksum):
 *
 *   {"v":1,"rev":8,"compactRev":6,"leases":[{"id":434782,"ttl":60}],"records":[
 *     {"main":5,"sub":0,"key":"…","value":"…","createRevision":5,"modRevision":5,"version":1,"lease":0},
 *     {"main":8,"sub":0,"key":"L2xvY2s=","tombstone":true}]}
 *
 * `records` is the whole backend — history since the last compaction included, so a watch from
 * before a restart still replays it. A lease's keys are not listed twice: each key's lease is in
 * its KeyValue, and restoring the records attaches it (as etcd's restore does).
 *
 * Invariants:
 * - decoding what encoding wrote gives back an equal commit or state;
 * - decoding never throws: bytes that passed the checksums yet are not a valid payload (a bug, or
 *   a version from a newer course) come back as a StorageError saying what is wrong.
 *
 * What etcd does differently: a WAL entry's data is a protobuf `InternalRaftRequest` — the client's
 * request itself, which replay executes again — and the state is the bbolt file
 * `member/snap/db`, with the buckets `key` (the backend), `lease` and `meta` (compaction
 * revisions, the index of the last applied entry). Protobuf is smaller and faster; JSON is what a
 * learner can open in an editor.
 *
 * @upstream etcd-io/etcd api/etcdserverpb/raft_internal.proto (InternalRaftRequest)
 * @upstream etcd-io/etcd server/mvcc/buckets/bucket.go (Key, Lease, Meta)
 * @upstream etcd-io/etcd server/lease/leasepb/lease.proto (Lease)
 * @chapter 01-etcd-watch
 */
import { Buffer } from "node:buffer";
import type { BackendRecord } from "./backend.ts";
import { type KeyValue, tombstoneKeyValue } from "./kv.ts";
import type { Commit } from "./kvstore.ts";

/** The version this code writes, and the only one it reads. */
export const formatVersion = 1;

export type StorageErrorReason =
  | "storage: invalid record"
  | "storage: invalid snapshot"
  | "storage: unsupported version"
  | "storage: record does not apply";

/** A payload storage cannot use, or a record that does not fit the state before it. */
export class StorageError extends Error {
  override readonly name = "StorageError";
  constructor(
    readonly reason: StorageErrorReason,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/** The store's whole state at one revision: what a snapshot holds. */
export interface StoreState {
  /** The revision of the last write in it. */
  rev: number;
  /** The last compaction revision, -1 if none. */
  compactRev: number;
  /** The backend, in revision order. */
  records: readonly BackendRecord[];
  /** Every lease, with its granted TTL in seconds. */
  leases: readonly { id: number; ttl: number }[];
}

// #region encode
/** One commit as a WAL record payload. */
export function encodeCommit(commit: Commit): Uint8Array {
  let body: object;
  switch (commit.type) {
    case "txn":
      body = { type: "txn", rev: commit.rev, changes: commit.changes.map(encodeChange) };
      break;
    case "leaseGrant":
      body = { type: "leaseGrant", rev: commit.rev, id: commit.id, ttl: commit.ttl };
      break;
    case "leaseRevoke":
      body = {
        type: "leaseRevoke",
        rev: commit.rev,
        id: commit.id,
        changes: commit.changes.map(encodeChange),
      };
      break;
    case "compaction":
      body = { type: "compaction", rev: commit.rev, compactRev: commit.compactRev };
      break;
  }
  return toJSONBytes({ v: formatVersion, ...body });
}

/** A put keeps its whole KeyValue; a deletion (createRevision 0) is only its key. */
function encodeChange(kv: KeyValue): object {
  if (kv.createRevision === 0) return { key: base64(kv.key), tombstone: true };
  return {
    key: base64(kv.key),
    value: base64(kv.value),
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
    lease: kv.lease,
  };
}

/** The store's state as a snapshot payload. */
export function encodeState(state: StoreState): Uint8Array {
  return toJSONBytes({
    v: formatVersion,
    rev: state.rev,
    compactRev: state.compactRev,
    leases: state.leases.map(({ id, ttl }) => ({ id, ttl })),
    records: state.records.map((r) => ({ main: r.rev.main, sub: r.rev.sub, ...encodeChange(r.kv) })),
  });
}
// #endregion encode

// #region decode
/** A WAL record payload back as a commit, or why it is not one. */
export function decodeCommit(payload: Uint8Array): Commit | StorageError {
  const fail = (detail: string) => new StorageError("storage: invalid record", detail);
  const obj = parseVersioned(payload, fail);
  if (obj instanceof StorageError) return obj;
  const rev = integer(obj, "rev");
  if (rev === undefined) return fail(`"rev" must be a non-negative integer in ${preview(payload)}`);
  switch (obj.type) {
    case "txn":
    case "leaseRevoke": {
      const changes = decodeChanges(obj.changes);
      if (typeof changes === "string") return fail(`${changes} in ${preview(payload)}`);
      if (obj.type === "txn") return { type: "txn", rev, changes };
      const id = integer(obj, "id");
      if (id === undefined) return fail(`"id" must be a lease id in ${preview(payload)}`);
      return { type: "leaseRevoke", rev, id, changes };
    }
    case "leaseGrant": {
      const id = integer(obj, "id");
      const ttl = integer(obj, "ttl");
      if (id === undefined || ttl === undefined)
        return fail(`"id" and "ttl" must be integers in ${preview(payload)}`);
      return { type: "leaseGrant", rev, id, ttl };
    }
    case "compaction": {
      const compactRev = integer(obj, "compactRev");
      if (compactRev === undefined) return fail(`"compactRev" must be an integer in ${preview(payload)}`);
      return { type: "compaction", rev, compactRev };
    }
    default:
      return fail(`unknown record type ${JSON.stringify(obj.type)} in ${preview(payload)}`);
  }
}

/** A snapshot payload back as the store's state, or why it is not one. */
export function decodeState(payload: Uint8Array): StoreState | StorageError {
  const fail = (detail: string) => new StorageError("storage: invalid snapshot", detail);
  const obj = parseVersioned(payload, fail);
  if (obj instanceof StorageError) return obj;
  const rev = integer(obj, "rev");
  const compactRev = integer(obj, "compactRev", -1);
  if (rev === undefined || compactRev === undefined) return fail(`"rev" and "compactRev" must be integers`);
  if (!Array.isArray(obj.leases) || !Array.isArray(obj.records))
    return fail(`"leases" and "records" must be lists`);

  const leases: { id: number; ttl: number }[] = [];
  for (const [i, l] of obj.leases.entries()) {
    const id = isObject(l) ? integer(l, "id") : undefined;
    const ttl = isObject(l) ? integer(l, "ttl") : undefined;
    if (id === undefined || ttl === undefined) return fail(`lease ${i} needs an integer "id" and "ttl"`);
    leases.push({ id, ttl });
  }
  const records: BackendRecord[] = [];
  for (const [i, r] of obj.records.entries()) {
    const main = isObject(r) ? integer(r, "main") : undefined;
    const sub = isObject(r) ? integer(r, "sub") : undefined;
    const kv = decodeChange(r);
    if (main === undefined || sub === undefined) return fail(`record ${i} needs an integer "main" and "sub"`);
    if (typeof kv === "string") return fail(`record ${i}: ${kv}`);
    records.push({ rev: { main, sub }, tombstone: kv.createRevision === 0, kv });
  }
  return { rev, compactRev, records, leases };
}

function decodeChanges(raw: unknown): KeyValue[] | string {
  if (!Array.isArray(raw)) return `"changes" must be a list`;
  const changes: KeyValue[] = [];
  for (const [i, c] of raw.entries()) {
    const kv = decodeChange(c);
    if (typeof kv === "string") return `change ${i}: ${kv}`;
    changes.push(kv);
  }
  return changes;
}

function decodeChange(raw: unknown): KeyValue | string {
  if (!isObject(raw) || typeof raw.key !== "string") return `a change needs a base64 "key"`;
  const key = fromBase64(raw.key);
  if (raw.tombstone === true) return tombstoneKeyValue(key);
  const createRevision = integer(raw, "createRevision");
  const modRevision = integer(raw, "modRevision");
  const version = integer(raw, "version");
  const lease = integer(raw, "lease");
  if (typeof raw.value !== "string") return `a put needs a base64 "value"`;
  if (
    createRevision === undefined ||
    modRevision === undefined ||
    version === undefined ||
    lease === undefined
  ) {
    return `a put needs integer "createRevision", "modRevision", "version" and "lease"`;
  }
  return { key, value: fromBase64(raw.value), createRevision, modRevision, version, lease };
}
// #endregion decode

type JSONObject = Record<string, unknown>;

/** Parses the JSON and checks its version before anything else is read. */
function parseVersioned(
  payload: Uint8Array,
  fail: (detail: string) => StorageError,
): JSONObject | StorageError {
  let obj: unknown;
  try {
    obj = JSON.parse(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8"));
  } catch (err) {
    return fail(`not JSON (${(err as Error).message}): ${preview(payload)}`);
  }
  if (!isObject(obj)) return fail(`not a JSON object: ${preview(payload)}`);
  if (obj.v !== formatVersion) {
    return new StorageError(
      "storage: unsupported version",
      `the data was written in format version ${JSON.stringify(obj.v)}; this etcd reads version ${formatVersion}. ` +
        "Start it with the course version that wrote the data directory, or start from an empty one.",
    );
  }
  return obj;
}

function isObject(x: unknown): x is JSONObject {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** obj[field] if it is an integer ≥ min (a safe one: ids and revisions stay below 2^53). */
function integer(obj: JSONObject, field: string, min = 0): number | undefined {
  const x = obj[field];
  return Number.isSafeInteger(x) && (x as number) >= min ? (x as number) : undefined;
}

function toJSONBytes(value: object): Uint8Array {
  return new Uint8Array(Buffer.from(JSON.stringify(value), "utf8"));
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

function fromBase64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, "base64"));
}

/** The start of a payload, for error messages. */
function preview(payload: Uint8Array): string {
  const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString("utf8");
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
