/**
 * Store transactions — reads at one revision, and writes that share one revision.
 * Mirrors etcd's server/mvcc/kvstore_txn.go.
 *
 * Solves:
 * - a read must see one consistent state even if it touches many keys: a `TxnRead` fixes the
 *   revision when it opens and reads every key at that revision;
 * - a write transaction may change several keys and must look atomic: every change gets the same
 *   main revision (current + 1) and sub-revisions 0, 1, 2 … in order; the store's revision moves
 *   only when the transaction ends, and only if something changed;
 * - a transaction must read its own writes: a range inside a write that already changed something
 *   reads at the new revision.
 *
 * Invariants:
 * - a change with `createRevision === 0` is a deletion (tombstone); any other is a put;
 * - inside one write, `changes[i]` was stored at revision {beginRev + 1, i};
 * - at most one write transaction is open at a time (etcd holds a lock; we check).
 *
 * @upstream etcd-io/etcd server/mvcc/kvstore_txn.go (storeTxnRead, storeTxnWrite, rangeKeys)
 * @upstream etcd-io/etcd server/mvcc/kvstore.go (ErrCompacted, ErrFutureRev)
 * @chapter 01-etcd-watch
 */

import type { LeaseChange, Lessor } from "../lease/lessor.ts";
import type { KeyValue } from "../mvccpb/kv.ts";
import { tombstoneKeyValue } from "../mvccpb/kv.ts";
import { copyBytes } from "../pkg/bytes.ts";
import { EtcdError, panic } from "../rpctypes/error.ts";
import type { Backend } from "./backend.ts";
import type { TreeIndex } from "./index.ts";
import type { RangeOptions, RangeResult } from "./kv.ts";
import { revision } from "./revision.ts";

export const ErrCompacted = new EtcdError(
  "OutOfRange",
  "mvcc: required revision has been compacted",
  "etcdserver: mvcc: required revision has been compacted",
);
export const ErrFutureRev = new EtcdError(
  "OutOfRange",
  "mvcc: required revision is a future revision",
  "etcdserver: mvcc: required revision is a future revision",
);

/**
 * What a transaction reaches into its store for (the KVStore of kvstore.ts; in etcd the txns hold
 * the `*store` itself): the index, the backend, the lessor, the compaction revision, and the
 * commit at the end of a write.
 */
export interface TxnStore {
  readonly index: TreeIndex;
  readonly backend: Backend;
  readonly lessor?: Lessor;
  compactRev(): number;
  /** Called by TxnWrite.end(): the store commits the transaction's changes. */
  finishWrite(txn: TxnWrite): void;
}

/** A read-only view of the store at the revision current when it was opened. */
export class TxnRead {
  constructor(
    protected readonly store: TxnStore,
    /** The compaction revision when opened: reads below it fail. */
    readonly firstRev: number,
    private readonly openedAt: number,
  ) {}

  /** The revision this view reads at by default. */
  rev(): number {
    return this.openedAt;
  }

  range(key: Uint8Array, rangeEnd: Uint8Array | undefined, opts: RangeOptions = {}): RangeResult | EtcdError {
    return this.rangeKeys(key, rangeEnd, this.rev(), opts);
  }

  end(): void {}

  // #region range-keys
  /**
   * Reads the keys in the range as of `opts.rev` (0 = curRev). The answer's `rev` is always
   * curRev: it tells the client how new the store was, whatever revision it asked to read at.
   */
  protected rangeKeys(
    key: Uint8Array,
    rangeEnd: Uint8Array | undefined,
    curRev: number,
    opts: RangeOptions,
  ): RangeResult | EtcdError {
    let rev = opts.rev ?? 0;
    if (rev > curRev) return ErrFutureRev;
    if (rev <= 0) rev = curRev;
    // Reading *at* the compaction revision still works: compaction keeps what rev needs.
    if (rev < this.store.compactRev()) return ErrCompacted;

    const { index, backend } = this.store;
    if (opts.countOnly) {
      return { kvs: [], count: index.countRevisions(key, rangeEnd, rev), more: false, rev: curRev };
    }
    const { revs, total } = index.revisions(key, rangeEnd, rev, opts.limit ?? 0);
    const kvs = revs.map((r) => {
      const rec = backend.get(r) ?? panic(`range failed to find revision pair ${r.main}.${r.sub}`);
      return opts.keysOnly ? { ...rec.kv, value: new Uint8Array(0) } : rec.kv;
    });
    return { kvs, count: total, more: kvs.length < total, rev: curRev };
  }
  // #endregion range-keys
}

/** A write transaction: every change it makes is stored at revision beginRev + 1. */
export class TxnWrite extends TxnRead {
  /** The changes so far, in order; see the invariants in the header. */
  readonly changes: KeyValue[] = [];
  /**
   * Set by the lessor (lease/lessor.ts) when this transaction grants or revokes a lease. The lease
   * change commits together with the key changes — for a revoke, the deletion of the lease's
   * keys — so a durable store logs both in one record, and a crash keeps both or neither.
   */
  leaseChange?: LeaseChange;
  private ended = false;

  constructor(
    store: TxnStore,
    /** The store's revision when the transaction began; it writes at beginRev + 1. */
    readonly beginRev: number,
  ) {
    super(store, store.compactRev(), beginRev);
  }

  /** Reads see this transaction's own changes once it has made any. */
  override range(
    key: Uint8Array,
    rangeEnd: Uint8Array | undefined,
    opts: RangeOptions = {},
  ): RangeResult | EtcdError {
    const rev = this.changes.length > 0 ? this.beginRev + 1 : this.beginRev;
    return this.rangeKeys(key, rangeEnd, rev, opts);
  }

  // #region put
  /** Stores a new value for key; returns the revision it will be visible at. */
  put(key: Uint8Array, value: Uint8Array, lease = 0): number {
    this.checkOpen();
    const { index, backend, lessor } = this.store;
    const rev = this.beginRev + 1;
    const stored = copyBytes(key);

    // A key that exists keeps its create_revision and counts one more version; a new (or
    // re-created) key starts over at version 1 with create_revision = this revision.
    const prev = index.get(stored, rev);
    const exists = !(prev instanceof Error);
    const kv: KeyValue = {
      key: stored,
      value: copyBytes(value),
      createRevision: exists ? prev.created.main : rev,
      modRevision: rev,
      version: exists ? prev.version + 1 : 1,
      lease,
    };
    const idxRev = revision(rev, this.changes.length);
    backend.put({ rev: idxRev, tombstone: false, kv });
    index.put(stored, idxRev);
    this.changes.push(kv);

    // The key belongs to exactly one lease (or none): the one named by its latest put.
    const oldLease = exists && lessor ? lessor.getLease(stored) : 0;
    if (oldLease !== 0) lessor?.detach(oldLease, stored);
    if (lease !== 0) {
      const err = lessor ? lessor.attach(lease, stored) : undefined;
      if (!lessor || err) panic(`unexpected error from lease attach (lease ${lease})`);
    }
    return rev;
  }
  // #endregion put

  // #region delete-range
  /**
   * Deletes every key alive in the range. Returns how many, and the revision of the deletion —
   * which stays beginRev if nothing at all changed (deleting nothing is not a write).
   */
  deleteRange(key: Uint8Array, rangeEnd: Uint8Array | undefined): { deleted: number; rev: number } {
    this.checkOpen();
    const readRev = this.changes.length > 0 ? this.beginRev + 1 : this.beginRev;
    const { keys } = this.store.index.range(key, rangeEnd, readRev);
    for (const k of keys) this.delete(k);
    const changed = keys.length > 0 || this.changes.length > 0;
    return { deleted: keys.length, rev: changed ? this.beginRev + 1 : this.beginRev };
  }

  private delete(key: Uint8Array): void {
    const { index, backend, lessor } = this.store;
    const idxRev = revision(this.beginRev + 1, this.changes.length);
    const kv = tombstoneKeyValue(key);
    backend.put({ rev: idxRev, tombstone: true, kv });
    const err = index.tombstone(key, idxRev);
    if (err) panic(`failed to tombstone an existing key: ${err.message}`);
    this.changes.push(kv);

    const leaseID = lessor ? lessor.getLease(key) : 0;
    if (leaseID !== 0) lessor?.detach(leaseID, key);
  }
  // #endregion delete-range

  /** Publishes the changes: the store's revision becomes beginRev + 1 if anything changed. */
  override end(): void {
    this.checkOpen();
    this.ended = true;
    this.store.finishWrite(this);
  }

  private checkOpen(): void {
    if (this.ended) panic("write txn used after end()");
  }
}
