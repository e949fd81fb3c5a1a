/**
 * Storage format — the bytes that storage writes: one WAL record per commit, and one snapshot
 * payload holding the whole store.
 * Mirrors etcd-io/etcd api/etcdserverpb/raft_internal.proto.
 *
 * Solves:
 * - a commit (kvstore.ts, `Commit`) must become bytes the WAL can keep and come back exactly after
 *   a restart, although keys and values are arbitrary bytes;
 * - every write pays for its encoding, and every snapshot encodes the whole store: so the format
 *   is binary, fixed-width fields in a fixed order, and keys and values are copied in as they are
 *   (the first version was JSON with base64 keys and values — readable in an editor, but its
 *   encoding took more time than the rest of the write path put together, and a snapshot of a
 *   large store stalled the server for a noticeable fraction of a second);
 * - the format will change as the course grows: every payload starts with its version, and a
 *   version this code does not know stops the start instead of being misread.
 *
 * A WAL record (the payload of one frame; record.ts adds the length, checksum and revision).
 * All integers are little-endian; u64 fields hold values below 2^53 (JavaScript's safe integers):
 *
 *   size  field
 *   1     format version (2)
 *   1     type: 1 txn, 2 leaseGrant, 3 leaseRevoke, 4 compaction
 *   8     rev
 *   then, by type:
 *     txn           4 change count, then the changes
 *     leaseGrant    8 lease id, 8 ttl (seconds)
 *     leaseRevoke   8 lease id, 4 change count, then the changes
 *     compaction    8 compactRev
 *
 * One change:
 *
 *   1     kind: 0 put, 1 deletion (tombstone)
 *   4     key length K, then K bytes of key
 *   a put only: 8 createRevision, 8 modRevision, 8 version, 8 lease,
 *               4 value length V, then V bytes of value
 *
 * A "txn" is any write transaction that changed keys — a Put, a DeleteRange or a Txn — with its
 * changes in sub-revision order, all at `rev`; revoking a lease (by a client, or on expiry) is a
 * "leaseRevoke", whose changes delete the lease's keys. A change's revisions and version are not
 * needed to redo it — replay recomputes them — but they are kept, so that replay can check that it
 * rebuilt exactly what was committed.
 *
 * A snapshot (the payload of a .snap file; snapshotter.ts adds the checksum):
 *
 *   1     format version (2)
 *   8     rev
 *   8     compactRev + 1 (0: never compacted)
 *   4     lease count, then per lease: 8 id, 8 ttl
 *   4     record count, then per record: 8 main, 8 sub, one change (as above)
 *
 * The records are the whole backend — history since the last compaction included, so a watch from
 * before a restart still replays it. A lease's keys are not listed twice: each key's lease is in
 * its KeyValue, and restoring the records attaches it (as etcd's restore does).
 *
 * Invariants:
 * - decoding what encoding wrote gives back an equal commit or state;
 * - decoding never throws: bytes that passed the checksums yet are not a valid payload (a bug, or
 *   a version from a newer course) come back as a StorageError saying what is wrong and where;
 * - a payload is read to its last byte: one that ends early, or goes on after its last field, is
 *   invalid.
 *
 * What etcd does differently: a WAL entry's data is a protobuf `InternalRaftRequest` — the client's
 * request itself, which replay executes again — and the state is the bbolt file
 * `member/snap/db`, with the buckets `key` (the backend), `lease` and `meta` (compaction
 * revisions, the index of the last applied entry). Protobuf spends fewer bytes on small numbers
 * (varints) and can add fields without a new version; fixed widths are simpler to read.
 *
 * @upstream etcd-io/etcd api/etcdserverpb/raft_internal.proto (InternalRaftRequest)
 * @upstream etcd-io/etcd server/mvcc/buckets/bucket.go (Key, Lease, Meta)
 * @upstream etcd-io/etcd server/lease/leasepb/lease.proto (Lease)
 * @chapter 01-etcd-watch
 */
import type { BackendRecord } from "../mvcc/backend.ts";
import type { Commit } from "../mvcc/kvstore.ts";
import { type KeyValue, tombstoneKeyValue } from "../mvccpb/kv.ts";
import { panic } from "../rpctypes/error.ts";

/** The version this code writes, and the only one it reads. */
export const formatVersion = 2;

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
const TYPE_TXN = 1;
const TYPE_LEASE_GRANT = 2;
const TYPE_LEASE_REVOKE = 3;
const TYPE_COMPACTION = 4;
const KIND_PUT = 0;
const KIND_TOMBSTONE = 1;

/** One commit as a WAL record payload. */
export function encodeCommit(commit: Commit): Uint8Array {
  const changes = commit.type === "txn" || commit.type === "leaseRevoke" ? commit.changes : [];
  const fixed = { txn: 4, leaseGrant: 16, leaseRevoke: 12, compaction: 8 }[commit.type];
  let size = 1 + 1 + 8 + fixed;
  for (const kv of changes) size += changeBytes(kv);
  const w = new Writer(size);
  w.u8(formatVersion);
  switch (commit.type) {
    case "txn":
      w.u8(TYPE_TXN).u64(commit.rev).u32(changes.length);
      break;
    case "leaseGrant":
      w.u8(TYPE_LEASE_GRANT).u64(commit.rev).u64(commit.id).u64(commit.ttl);
      break;
    case "leaseRevoke":
      w.u8(TYPE_LEASE_REVOKE).u64(commit.rev).u64(commit.id).u32(changes.length);
      break;
    case "compaction":
      w.u8(TYPE_COMPACTION).u64(commit.rev).u64(commit.compactRev);
      break;
  }
  for (const kv of changes) writeChange(w, kv);
  return w.done();
}

/** The bytes one change takes. */
function changeBytes(kv: KeyValue): number {
  return 1 + 4 + kv.key.length + (kv.createRevision === 0 ? 0 : 32 + 4 + kv.value.length);
}

/** A put keeps its whole KeyValue; a deletion (createRevision 0) is only its key. */
function writeChange(w: Writer, kv: KeyValue): void {
  if (kv.createRevision === 0) {
    w.u8(KIND_TOMBSTONE).u32(kv.key.length).bytes(kv.key);
    return;
  }
  w.u8(KIND_PUT).u32(kv.key.length).bytes(kv.key);
  w.u64(kv.createRevision).u64(kv.modRevision).u64(kv.version).u64(kv.lease);
  w.u32(kv.value.length).bytes(kv.value);
}

/** The store's state as a snapshot payload. */
export function encodeState(state: StoreState): Uint8Array {
  let size = 1 + 8 + 8 + 4 + 16 * state.leases.length + 4;
  for (const r of state.records) size += 16 + changeBytes(r.kv);
  const w = new Writer(size);
  w.u8(formatVersion)
    .u64(state.rev)
    .u64(state.compactRev + 1);
  w.u32(state.leases.length);
  for (const { id, ttl } of state.leases) w.u64(id).u64(ttl);
  w.u32(state.records.length);
  for (const r of state.records) {
    w.u64(r.rev.main).u64(r.rev.sub);
    writeChange(w, r.kv);
  }
  return w.done();
}

/** Fills a buffer of a size computed in advance, front to back. */
class Writer {
  private readonly buf: Uint8Array;
  private readonly view: DataView;
  private at = 0;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
    this.view = new DataView(this.buf.buffer);
  }

  u8(n: number): this {
    this.buf[this.at++] = n;
    return this;
  }

  u32(n: number): this {
    this.view.setUint32(this.at, n, true);
    this.at += 4;
    return this;
  }

  /** A safe integer ≥ 0 as two 32-bit halves (no BigInt: this runs for every field of every write). */
  u64(n: number): this {
    this.view.setUint32(this.at, n % 2 ** 32, true);
    this.view.setUint32(this.at + 4, Math.floor(n / 2 ** 32), true);
    this.at += 8;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.buf.set(b, this.at);
    this.at += b.length;
    return this;
  }

  done(): Uint8Array {
    if (this.at !== this.buf.length) panic(`storage format: wrote ${this.at} of ${this.buf.length} bytes`);
    return this.buf;
  }
}
// #endregion encode

// #region decode
/** A WAL record payload back as a commit, or why it is not one. */
export function decodeCommit(payload: Uint8Array): Commit | StorageError {
  const r = new Reader(payload);
  const version = checkVersion(r);
  if (version) return version;
  const type = r.u8();
  const rev = r.u64();
  let commit: Commit | undefined;
  switch (type) {
    case TYPE_TXN: {
      const changes = readChanges(r);
      commit = changes && { type: "txn", rev, changes };
      break;
    }
    case TYPE_LEASE_GRANT:
      commit = { type: "leaseGrant", rev, id: r.u64(), ttl: r.u64() };
      break;
    case TYPE_LEASE_REVOKE: {
      const id = r.u64();
      const changes = readChanges(r);
      commit = changes && { type: "leaseRevoke", rev, id, changes };
      break;
    }
    case TYPE_COMPACTION:
      commit = { type: "compaction", rev, compactRev: r.u64() };
      break;
    default:
      if (!r.problem) return invalidRecord(`unknown record type ${type} at byte 1`);
  }
  const problem = r.finish();
  if (problem || !commit) return invalidRecord(problem ?? "no record");
  return commit;
}

/** A snapshot payload back as the store's state, or why it is not one. */
export function decodeState(payload: Uint8Array): StoreState | StorageError {
  const fail = (detail: string) => new StorageError("storage: invalid snapshot", detail);
  const r = new Reader(payload);
  const version = checkVersion(r);
  if (version) return version;
  const rev = r.u64();
  const compactRev = r.u64() - 1;
  const leases: { id: number; ttl: number }[] = [];
  for (let i = 0, n = r.count(16); i < n && !r.problem; i++) leases.push({ id: r.u64(), ttl: r.u64() });
  const records: BackendRecord[] = [];
  for (let i = 0, n = r.count(16 + 5); i < n && !r.problem; i++) {
    const main = r.u64();
    const sub = r.u64();
    const kv = readChange(r);
    if (kv) records.push({ rev: { main, sub }, tombstone: kv.createRevision === 0, kv });
  }
  const problem = r.finish();
  if (problem) return fail(problem);
  return { rev, compactRev, records, leases };
}

function readChanges(r: Reader): KeyValue[] | undefined {
  const changes: KeyValue[] = [];
  for (let i = 0, n = r.count(5); i < n && !r.problem; i++) {
    const kv = readChange(r);
    if (kv) changes.push(kv);
  }
  return r.problem ? undefined : changes;
}

function readChange(r: Reader): KeyValue | undefined {
  const kindAt = r.at;
  const kind = r.u8();
  const key = r.bytes(r.u32());
  if (kind === KIND_TOMBSTONE) return tombstoneKeyValue(key);
  if (kind !== KIND_PUT) {
    r.fail(`unknown change kind ${kind} at byte ${kindAt}`);
    return undefined;
  }
  const createRevision = r.u64();
  const modRevision = r.u64();
  const version = r.u64();
  const lease = r.u64();
  const value = r.bytes(r.u32());
  return { key, value, createRevision, modRevision, version, lease };
}
// #endregion decode

function invalidRecord(detail: string): StorageError {
  return new StorageError("storage: invalid record", detail);
}

/** Checks the version byte before anything else is read. */
function checkVersion(r: Reader): StorageError | undefined {
  const version = r.u8();
  if (version === formatVersion) return undefined;
  // Version 1 was JSON: its first byte is the `{` of an object.
  const written = version === 0x7b ? "1 (JSON)" : String(version);
  return new StorageError(
    "storage: unsupported version",
    `the data was written in format version ${written}; this etcd reads version ${formatVersion}. ` +
      "Start it with the course version that wrote the data directory, or start from an empty one.",
  );
}

/**
 * Reads a payload front to back. It never throws: the first problem (the payload ends early, or
 * a number is beyond 2^53) is remembered, and from then on every read returns zeros.
 */
class Reader {
  at = 0;
  problem: string | undefined;
  private readonly view: DataView;

  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  fail(problem: string): void {
    this.problem ??= problem;
  }

  private take(n: number): boolean {
    if (this.problem) return false;
    if (this.at + n <= this.buf.length) return true;
    this.fail(`the payload ends at byte ${this.buf.length}, inside a field that starts at byte ${this.at}`);
    return false;
  }

  u8(): number {
    return this.take(1) ? this.buf[this.at++] : 0;
  }

  u32(): number {
    if (!this.take(4)) return 0;
    const n = this.view.getUint32(this.at, true);
    this.at += 4;
    return n;
  }

  u64(): number {
    if (!this.take(8)) return 0;
    const low = this.view.getUint32(this.at, true);
    const high = this.view.getUint32(this.at + 4, true);
    if (high >= 2 ** 21) this.fail(`the number at byte ${this.at} exceeds 2^53`);
    this.at += 8;
    return high * 2 ** 32 + low;
  }

  /** A copy of the next n bytes: the caller may drop the (possibly large) payload. */
  bytes(n: number): Uint8Array {
    if (!this.take(n)) return new Uint8Array(0);
    this.at += n;
    return this.buf.slice(this.at - n, this.at);
  }

  /** A count of items that take at least `minBytes` each: more than the bytes left is damage. */
  count(minBytes: number): number {
    const at = this.at;
    const n = this.u32();
    if (n * minBytes > this.buf.length - this.at)
      this.fail(`the count ${n} at byte ${at} exceeds the payload`);
    return this.problem ? 0 : n;
  }

  /** The first problem, or trailing bytes after the last field. */
  finish(): string | undefined {
    if (this.problem) return this.problem;
    if (this.at !== this.buf.length)
      return `${this.buf.length - this.at} bytes follow the last field, at byte ${this.at}`;
    return undefined;
  }
}
