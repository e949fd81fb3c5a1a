/**
 * KVStore — the multi-version key-value store: current revision, index, values, compaction.
 *
 * Solves:
 * - clients need the latest value *and* consistent reads of the past ("list at revision 41") and
 *   a total order of changes to watch; so the store never overwrites: each change is stored under
 *   a new revision (backend.ts) and the index (index.ts) finds the right one for any revision;
 * - several changes must land atomically (a txn): they share one revision (kvstore-txn.ts);
 * - history cannot grow forever: compact(rev) drops what only reads before rev needed.
 *
 * Invariants:
 * - `currentRev` is the revision of the last write transaction that changed something; a new
 *   store starts at 1 (etcd's first write is revision 2);
 * - `compactMainRev` is the last compaction revision (-1 before any); reads below it fail;
 * - every revision the index points at is in the backend, and the backend holds nothing newer
 *   than currentRev once a write transaction has ended.
 *
 * Threading: JavaScript runs one thing at a time, so where etcd takes locks we only need to check
 * that no two write transactions are open at once.
 *
 * @upstream etcd-io/etcd server/mvcc/kvstore.go (store, NewStore, Compact, restore)
 * @upstream etcd-io/etcd server/mvcc/kv_view.go (readView, writeView)
 * @chapter 01-etcd-watch
 */
import { applyDeleteRange, applyPut, applyTxn } from "./apply.ts";
import { Backend, type BackendRecord } from "./backend.ts";
import { mapKey } from "./bytes.ts";
import { type EtcdError, panic } from "./errors.ts";
import { TreeIndex } from "./index.ts";
import { KeyIndex } from "./key-index.ts";
import type { KeyValue, RangeOptions, RangeResult } from "./kv.ts";
import { type CompactionResult, scheduleCompaction } from "./kvstore-compaction.ts";
import { ErrCompacted, ErrFutureRev, TxnRead, TxnWrite } from "./kvstore-txn.ts";
import { revision } from "./revision.ts";
import type { TxnRequest, TxnResponse } from "./rpc.ts";

export { ErrCompacted, ErrFutureRev } from "./kvstore-txn.ts";

/** A write transaction that may only delete: what the lessor gets to revoke a lease's keys. */
export interface TxnDelete {
  deleteRange(key: Uint8Array, rangeEnd: Uint8Array | undefined): { deleted: number; rev: number };
  end(): void;
}

/** What the store needs from the lessor (lease.ts): which key belongs to which lease. */
export interface StoreLessor {
  getLease(key: Uint8Array): number;
  attach(id: number, key: Uint8Array): EtcdError | undefined;
  detach(id: number, key: Uint8Array): EtcdError | undefined;
  /** Whether the lease exists (puts with an unknown lease are refused before writing). */
  lookup(id: number): object | undefined;
  /** The store hands the lessor a way to delete keys, so expiry goes through normal writes. */
  setRangeDeleter(rd: () => TxnDelete): void;
}

export interface KVStoreOptions {
  lessor?: StoreLessor;
}

export interface PutOptions {
  lease?: number;
  prevKv?: boolean;
  ignoreValue?: boolean;
  ignoreLease?: boolean;
}

export class KVStore {
  index = new TreeIndex();
  backend = new Backend();
  readonly lessor?: StoreLessor;

  protected currentRev = 1;
  protected compactMainRev = -1;
  private writing = false;

  constructor(opts: KVStoreOptions = {}) {
    this.lessor = opts.lessor;
    // Revoking a lease deletes its keys through an ordinary write transaction — of this store, or
    // of a subclass (the watchable store), so that watchers see the deletions.
    this.lessor?.setRangeDeleter(() => this.write());
  }

  /** The revision of the last completed write. */
  rev(): number {
    return this.currentRev;
  }

  /** The last compaction revision; -1 if never compacted. */
  compactRev(): number {
    return this.compactMainRev;
  }

  // #region txns
  read(): TxnRead {
    return new TxnRead(this, this.compactMainRev, this.currentRev);
  }

  write(): TxnWrite {
    if (this.writing) panic("a write txn is already open: end it before starting another");
    this.writing = true;
    return new TxnWrite(this, this.currentRev);
  }

  /**
   * Called by TxnWrite.end(). Only a transaction that changed something takes a revision, so
   * revisions count real changes and a no-op write is invisible to watchers.
   * Subclasses extend this to publish the changes (watchable-store.ts).
   */
  finishWrite(txn: TxnWrite): void {
    if (txn.changes.length > 0) this.currentRev++;
    this.writing = false;
  }
  // #endregion txns

  // #region kv-api
  /** Reads keys at opts.rev (default: now). See RangeResult for count, more and rev. */
  range(key: Uint8Array, rangeEnd?: Uint8Array, opts: RangeOptions = {}): RangeResult | EtcdError {
    return this.read().range(key, rangeEnd, opts);
  }

  /** Puts one key. `rev` is the revision of the put; `prevKv` the key before it, if asked for. */
  put(
    key: Uint8Array,
    value: Uint8Array,
    opts: PutOptions = {},
  ): { rev: number; prevKv?: KeyValue } | EtcdError {
    const resp = applyPut(this, undefined, { key, value, ...opts });
    if (resp instanceof Error) return resp;
    return { rev: resp.header.revision, prevKv: resp.prevKv };
  }

  /** Deletes every key in the range; `deleted` counts them. Deleting nothing takes no revision. */
  deleteRange(
    key: Uint8Array,
    rangeEnd?: Uint8Array,
    opts: { prevKv?: boolean } = {},
  ): { deleted: number; rev: number; prevKvs: KeyValue[] } | EtcdError {
    const resp = applyDeleteRange(this, undefined, { key, rangeEnd, prevKv: opts.prevKv });
    if (resp instanceof Error) return resp;
    return { deleted: resp.deleted, rev: resp.header.revision, prevKvs: resp.prevKvs };
  }

  /** If every compare holds, runs `success`, else `failure` — atomically, at one revision. */
  txn(req: TxnRequest): TxnResponse | EtcdError {
    return applyTxn(this, req);
  }
  // #endregion kv-api

  // #region compact
  /**
   * Compacts at rev: reads and watches below rev will fail from now on. Compacting at or below
   * the last compaction, or beyond the current revision, is refused.
   */
  compact(rev: number): CompactionResult | EtcdError {
    if (rev <= this.compactMainRev) return ErrCompacted;
    if (rev > this.currentRev) return ErrFutureRev;
    this.compactMainRev = rev;
    return scheduleCompaction(this.index, this.backend, rev);
  }
  // #endregion compact

  // #region restore
  /**
   * Rebuilds the store from backend records (in revision order) and the compaction revision they
   * were saved with — how a restarted member gets its index back from its data file. Only a
   * record's key, kind and revision matter for the index, except for the first record of a key
   * left by compaction, whose KeyValue tells its creation and version.
   */
  restore(records: Iterable<BackendRecord>, compactRev = -1): void {
    if (this.writing) panic("restore during a write txn");
    this.index = new TreeIndex();
    this.backend = new Backend();
    this.currentRev = 1;
    this.compactMainRev = compactRev;
    const keyToLease = new Map<string, { key: Uint8Array; lease: number }>();

    for (const rec of records) {
      this.backend.put(rec);
      restoreIntoIndex(this.index, rec);
      this.currentRev = rec.rev.main;
      const k = mapKey(rec.kv.key);
      if (!rec.tombstone && rec.kv.lease !== 0) keyToLease.set(k, { key: rec.kv.key, lease: rec.kv.lease });
      else keyToLease.delete(k);
    }
    // The newest records may all have been compacted away; the revision never goes back.
    if (this.currentRev < this.compactMainRev) this.currentRev = this.compactMainRev;
    for (const { key, lease } of keyToLease.values()) this.lessor?.attach(lease, key);
  }
  // #endregion restore
}

function restoreIntoIndex(index: TreeIndex, rec: BackendRecord): void {
  const { main, sub } = rec.rev;
  const ki = index.keyIndex(rec.kv.key);
  if (ki) {
    if (rec.tombstone) ki.tombstone(main, sub);
    else ki.put(main, sub);
    return;
  }
  const fresh = new KeyIndex(rec.kv.key);
  if (rec.tombstone) fresh.restoreTombstone(main, sub);
  else fresh.restore(revision(rec.kv.createRevision), rec.rev, rec.kv.version);
  index.insert(fresh);
}
