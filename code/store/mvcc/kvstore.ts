/**
 * KVStore — the multi-version key-value store: current revision, index, values, compaction.
 * Mirrors etcd's server/mvcc/kvstore.go.
 *
 * Solves:
 * - clients need the latest value *and* consistent reads of the past ("list at revision 41") and
 *   a total order of changes to watch; so the store never overwrites: each change is stored under
 *   a new revision (backend.ts) and the index (index.ts) finds the right one for any revision;
 * - several changes must land atomically (a txn): they share one revision (kvstore-txn.ts);
 * - history cannot grow forever: compact(rev) drops what only reads before rev needed;
 * - with a commit log (wal/storage.ts), nobody may see a write that a crash could still lose: a
 *   commit is *published* — made the current revision, read, sent to watchers — only once the
 *   log has it on disk. Writes meanwhile build on the newest, unpublished state (`headRev`), so
 *   they keep their order and never wait for the disk themselves.
 *
 * Invariants:
 * - `headRev` is the revision of the last write transaction that changed something; a new
 *   store starts at 1 (etcd's first write is revision 2). Write transactions start from it;
 * - `currentRev` is the published revision, which reads and watches see: equal to headRev
 *   without a commit log, at most headRev with one (the commits in between await the disk);
 * - `compactMainRev` is the last published compaction revision (-1 before any); reads below it
 *   fail. `compactHeadRev` ≥ it is the last one committed: like a write, a compaction is
 *   published only once it is on disk, and a new one is judged against the committed one;
 * - every revision the index points at is in the backend, and the backend holds nothing newer
 *   than headRev once a write transaction has ended.
 *
 * The store knows nothing of etcd's requests: what a Put's prev_kv or a Txn's compares mean is
 * etcdserver/apply.ts, which drives the store's read and write transactions — as etcd's apply.go
 * drives mvcc's TxnRead and TxnWrite.
 *
 * Threading: JavaScript runs one thing at a time, so where etcd takes locks we only need to check
 * that no two write transactions are open at once.
 *
 * @upstream etcd-io/etcd server/mvcc/kvstore.go (store, NewStore, Compact, restore)
 * @upstream etcd-io/etcd server/mvcc/kv_view.go (readView, writeView)
 * @chapter 01-etcd-watch
 */
import type { Lessor } from "../lease/lessor.ts";
import type { KeyValue } from "../mvccpb/kv.ts";
import { mapKey } from "../pkg/bytes.ts";
import { type EtcdError, panic } from "../rpctypes/error.ts";
import { Backend, type BackendRecord } from "./backend.ts";
import { TreeIndex } from "./index.ts";
import { KeyIndex } from "./key-index.ts";
import type { RangeOptions, RangeResult } from "./kv.ts";
import { type CompactionResult, scheduleCompaction } from "./kvstore-compaction.ts";
import { ErrCompacted, ErrFutureRev, TxnRead, type TxnStore, TxnWrite } from "./kvstore-txn.ts";
import { revision } from "./revision.ts";

// #region commit-log
/**
 * One commit, as the store hands it to its commit log: enough to redo it after a restart.
 * `rev` is the store's newest revision once the commit is made — a commit that changes no key
 * (a lease grant, a compaction, revoking a lease without keys) leaves it where it was.
 */
export type Commit =
  | { type: "txn"; rev: number; changes: readonly KeyValue[] }
  | { type: "leaseGrant"; rev: number; id: number; ttl: number }
  | { type: "leaseRevoke"; rev: number; id: number; changes: readonly KeyValue[] }
  | { type: "compaction"; rev: number; compactRev: number };

/** Where a durable store sends its commits (wal/storage.ts writes them to the WAL). */
export interface CommitLog {
  /**
   * Called at the moment of each commit, in commit order, so that the log's order is the
   * store's. Calls `onDurable` once this commit, and every commit before it, is on disk — in
   * commit order.
   */
  append(commit: Commit, onDurable?: () => void): void;
}
// #endregion commit-log

export interface KVStoreOptions {
  /** Which key belongs to which lease; the store keeps it up to date as keys are put and deleted. */
  lessor?: Lessor;
}

export class KVStore implements TxnStore {
  index = new TreeIndex();
  backend = new Backend();
  readonly lessor?: Lessor;

  protected currentRev = 1;
  protected headRev = 1;
  protected compactMainRev = -1;
  private compactHeadRev = -1;
  private writing = false;
  private commitLog?: CommitLog;

  constructor(opts: KVStoreOptions = {}) {
    this.lessor = opts.lessor;
    // Revoking a lease deletes its keys through an ordinary write transaction — of this store, or
    // of a subclass (the watchable store), so that watchers see the deletions.
    this.lessor?.setRangeDeleter(() => this.write());
  }

  /** The revision of the last published write: what reads and watches see. */
  rev(): number {
    return this.currentRev;
  }

  /** The revision of the last committed write, published or still on its way to disk. */
  head(): number {
    return this.headRev;
  }

  /**
   * From now on, every commit goes to `log`, and is published only once the log has it on disk.
   * Set after recovery: replaying the log must not write it again.
   */
  setCommitLog(log: CommitLog): void {
    if (this.commitLog) panic("the store already has a commit log");
    if (this.writing) panic("setCommitLog during a write txn");
    this.commitLog = log;
  }

  /** The last compaction revision that reads see (published); -1 if never compacted. */
  compactRev(): number {
    return this.compactMainRev;
  }

  /** The last compaction revision committed, published or still on its way to disk. */
  compactHead(): number {
    return this.compactHeadRev;
  }

  // #region txns
  read(): TxnRead {
    return new TxnRead(this, this.compactMainRev, this.currentRev);
  }

  write(): TxnWrite {
    if (this.writing) panic("a write txn is already open: end it before starting another");
    this.writing = true;
    // A write builds on every earlier commit, published or not: that is what orders writes.
    return new TxnWrite(this, this.headRev);
  }

  /**
   * Called by TxnWrite.end(): the commit. Only a transaction that changed something takes a
   * revision, so revisions count real changes and a no-op write is invisible to watchers.
   * Without a commit log, the commit is published at once. With one, it is appended now —
   * synchronously, so the log's order is the commit order — and published when it is durable.
   */
  finishWrite(txn: TxnWrite): void {
    this.writing = false;
    const changed = txn.changes.length > 0;
    if (changed) this.headRev++;
    const rev = this.headRev;
    if (!this.commitLog) {
      if (changed) this.publish(rev, txn.changes);
      return;
    }
    if (!changed && !txn.leaseChange) return; // a no-op: nothing to redo after a restart
    this.commitLog.append(commitOf(txn, rev), changed ? () => this.publish(rev, txn.changes) : undefined);
  }

  /**
   * Makes revision `rev` the current one: reads see it from now on. The watchable store extends
   * this to send the changes to its watchers.
   */
  protected publish(rev: number, _changes: readonly KeyValue[]): void {
    this.currentRev = rev;
  }
  // #endregion txns

  // #region kv-api
  /** Reads keys at opts.rev (default: now). See RangeResult for count, more and rev. */
  range(key: Uint8Array, rangeEnd?: Uint8Array, opts: RangeOptions = {}): RangeResult | EtcdError {
    return this.read().range(key, rangeEnd, opts);
  }

  /**
   * Puts one key in a write transaction of its own; returns the revision of the put. The lease
   * must exist (a request for an unknown lease is refused above the store, in apply.ts).
   */
  put(key: Uint8Array, value: Uint8Array, lease = 0): number {
    const txn = this.write();
    const rev = txn.put(key, value, lease);
    txn.end();
    return rev;
  }

  /** Deletes every key in the range, in a write transaction of its own. Deleting nothing takes no revision. */
  deleteRange(key: Uint8Array, rangeEnd?: Uint8Array): { deleted: number; rev: number } {
    const txn = this.write();
    const result = txn.deleteRange(key, rangeEnd);
    txn.end();
    return result;
  }
  // #endregion kv-api

  // #region compact
  /**
   * Compacts at rev: reads and watches below rev will fail from now on. Compacting at or below
   * the last compaction, or beyond the current (published) revision, is refused — so reads at
   * the published revision never hit a compaction.
   *
   * With a commit log a compaction is a commit like a write: logged now, in order, and carried
   * out only once it is durable. Carried out at once, a reader could see a revision compacted
   * that a crash then brings back. So the answer comes in two forms: in memory, the result; with
   * a log, a promise of it (etcd's `physical` channel, which closes once the deletes are done).
   */
  compact(rev: number): CompactionResult | Promise<CompactionResult> | EtcdError {
    // A second compaction is judged against the first even while that one awaits the disk.
    if (rev <= this.compactHeadRev) return ErrCompacted;
    if (rev > this.currentRev) return ErrFutureRev;
    this.compactHeadRev = rev;
    const log = this.commitLog;
    if (!log) return this.runCompaction(rev);
    return new Promise((resolve) =>
      log.append({ type: "compaction", rev: this.headRev, compactRev: rev }, () =>
        resolve(this.runCompaction(rev)),
      ),
    );
  }

  /**
   * Publishes a compaction: reads below rev fail from here on, and the history they needed goes.
   * Later commits may be in the index already; they are above rev, so compaction leaves them be.
   */
  private runCompaction(rev: number): CompactionResult {
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
    this.compactHeadRev = compactRev;
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
    this.headRev = this.currentRev;
    // A snapshot saved while its compaction awaited the disk still holds the history below it;
    // compacting again drops that and changes nothing when it was already compacted.
    if (compactRev > 0) scheduleCompaction(this.index, this.backend, compactRev);
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

/** The commit a finished write transaction makes; see Commit. */
function commitOf(txn: TxnWrite, rev: number): Commit {
  const lease = txn.leaseChange;
  if (lease?.kind === "grant") return { type: "leaseGrant", rev, id: lease.id, ttl: lease.ttl };
  if (lease?.kind === "revoke") return { type: "leaseRevoke", rev, id: lease.id, changes: txn.changes };
  return { type: "txn", rev, changes: txn.changes };
}
