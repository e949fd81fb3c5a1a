/**
 * Storage — the write-ahead log and snapshots joined to the store: every commit is on disk before
 * anyone sees it, and a restart rebuilds the store exactly.
 * Mirrors etcd-io/etcd server/etcdserver/storage.go.
 *
 * Solves:
 * - a write acknowledged to a client must survive `kill -9` and power loss; and nothing a client
 *   may have seen — an answer, a watch event, a read — may be undone by a crash;
 * - writes must not queue behind the disk one by one: the WAL commits them in groups (wal.ts);
 * - a restart must bring the store back exactly: keys, values, revisions, versions, the history
 *   since the last compaction (a watch from before the restart replays it), the compaction
 *   revision, and the leases with their keys;
 * - the log must stay short: after `snapshotCount` records, the whole state is saved as a snapshot
 *   and the log it covers is deleted.
 *
 * The life of one write, and why in this order:
 * 1. commit — the write runs on the store's newest state and takes the next revision. The next
 *    write builds on it at once: writes never wait for the disk, which is what lets the WAL batch
 *    them into one fsync.
 * 2. append — at the commit, synchronously, its record goes to the WAL (`append` below): the log's
 *    order is the commit order.
 * 3. durable — the WAL resolves the append once the fsync covering it returned.
 * 4. publish — only now, in commit order, the revision becomes the store's current revision:
 *    reads see it, watchers are sent its events (kvstore.ts, watchable-store.ts).
 * 5. answer — the client gets its response (etcd-server.ts waits for `sync()`).
 * A crash before step 3 loses the write — but nobody saw it: no answer, no event, no read.
 * A compaction takes the same path: committed (the next one is judged against it), appended,
 * and carried out — reads below it fail, its history goes — only at step 4.
 * etcd gives the same guarantee by saving raft entries to the WAL before applying them and
 * answering on apply (raft.go; for a one-member cluster since v3.5.5, `shouldWaitWALSync`).
 *
 * Recovery (`openStorage`): load the newest snapshot into the empty store — leases first, then the
 * backend records with the compaction revision (each key's lease is in its KeyValue, so the
 * leases get their keys back) — then redo each record after it through the store's own write
 * path, checking that it rebuilds exactly what was recorded. Leases start over with their full
 * TTL, as in etcd, whose lessor restores every lease without an expiry and refreshes them all
 * when the member becomes leader (lessor.Promote).
 *
 * Invariants:
 * - records are appended in commit order, and `onDurable` callbacks run in that same order, each
 *   only after the WAL made its record (and every earlier one) durable;
 * - `durable` ≤ `appended`; a `sync()` promise resolves once `durable` reaches what `appended`
 *   was when it was called — after the callbacks of those records ran;
 * - a snapshot is encoded between two commits, at the revision of the last appended record (the
 *   WAL's saveSnapshot requires exactly that); at most one is being saved at a time;
 * - after a WAL failure nothing more becomes durable: waiting answers fail, and `onFatal` tells
 *   the owner to stop, as etcd stops (`lg.Fatal`) when it cannot save to its WAL.
 *
 * What etcd does differently: the WAL holds raft entries (the requests), and the key-value state
 * lives in bbolt, which commits its own batches every 100 ms; a restart opens bbolt and replays
 * only the entries after its `consistent_index`. Its snapshots are raft snapshots (the v2 store
 * and membership); the bbolt file is the data. Ours: the WAL holds commit results, and a snapshot
 * is the whole store written as one file.
 *
 * @upstream etcd-io/etcd server/etcdserver/storage.go (storage, SaveSnap, Release, readWAL)
 * @upstream etcd-io/etcd server/etcdserver/server.go (NewServer, applyAll, triggerSnapshot, snapshot, DefaultSnapshotCount)
 * @upstream etcd-io/etcd server/etcdserver/raft.go (raftNode.start, shouldWaitWALSync)
 * @upstream etcd-io/etcd server/mvcc/kvstore.go (restore)
 * @upstream etcd-io/etcd server/lease/lessor.go (initAndRecover, Promote)
 * @upstream etcd-io/etcd pkg/wait/wait_time.go (WaitTime)
 * @chapter 01-etcd-watch
 */

import type { Lessor } from "../lease/lessor.ts";
import type { Commit, CommitLog, KVStore } from "../mvcc/kvstore.ts";
import type { KeyValue } from "../mvccpb/kv.ts";
import { compareBytes, toText } from "../pkg/bytes.ts";
import type { Fsync } from "../pkg/fileutil.ts";
import { type Logger, nopLogger } from "../pkg/log.ts";
import { EtcdError } from "../rpctypes/error.ts";
import { WALError } from "./errors.ts";
import type { WALRecord } from "./record.ts";
import { SnapError, type Snapshot } from "./snapshotter.ts";
import {
  decodeCommit,
  decodeState,
  encodeCommit,
  encodeState,
  StorageError,
  type StoreState,
} from "./storage-format.ts";
import { WAL } from "./wal.ts";

export { StorageError } from "./storage-format.ts";

/**
 * Records between two snapshots. etcd's --snapshot-count was 10,000 until v3.2 and is 100,000
 * since; we keep the old value: our snapshot is the whole store in one file, and a restart redoes
 * every record after it through the store's write path — tens of microseconds a record, so
 * 100,000 of them would make every start take seconds.
 */
export const defaultSnapshotCount = 10_000;

export interface StorageOptions {
  /** Where the WAL segments and snapshots live (embed.ts: `<data-dir>/member/wal`). */
  dir: string;
  /** Records after which a snapshot is saved (etcd's --snapshot-count). */
  snapshotCount?: number;
  logger?: Logger;
  /** Makes written bytes durable; tests inject one to hold fsyncs. Default: fsync(2). */
  fsync?: Fsync;
  /** Called once when the WAL fails: nothing more can be made durable, so the owner must stop. */
  onFatal?: (err: WALError) => void;
}

/** What a failed open returns: damage in the log or snapshot, or a record that does not fit. */
export type OpenStorageError = WALError | SnapError | StorageError;

interface InFlight {
  index: number;
  onDurable?: () => void;
  done: boolean;
}

interface Waiter {
  index: number;
  resolve: () => void;
  reject: (err: WALError) => void;
}

export class Storage implements CommitLog {
  /** Records appended since the open; a record's index is its position in this count. */
  private appended = 0;
  /** Every record up to this index is durable and its `onDurable` has run. */
  private durable = 0;
  /** Appended records not yet counted in `durable`, oldest first. */
  private readonly inFlight: InFlight[] = [];
  /** sync() callers, by the index they wait for (ascending). */
  private readonly waiters: Waiter[] = [];
  private failure?: WALError;
  private closed = false;
  private sinceSnapshot: number;
  private snapshotting?: Promise<void>;
  private readonly snapshotCount: number;
  private readonly log: Logger;

  constructor(
    private readonly wal: WAL,
    private readonly kv: KVStore,
    private readonly lessor: Lessor,
    private readonly opts: StorageOptions,
    /** Records replayed at the open: they count towards the next snapshot. */
    replayed: number,
  ) {
    this.snapshotCount = opts.snapshotCount || defaultSnapshotCount;
    this.log = opts.logger ?? nopLogger;
    this.sinceSnapshot = replayed;
  }

  // #region append
  /** The store's commit log: called at each commit, in commit order (see the header). */
  append(commit: Commit, onDurable?: () => void): void {
    const item: InFlight = { index: ++this.appended, onDurable, done: false };
    this.inFlight.push(item);
    this.wal.append(commit.rev, encodeCommit(commit)).then(
      () => {
        item.done = true;
        this.advance();
      },
      (err: unknown) => this.fail(err),
    );
    this.sinceSnapshot++;
    this.maybeSnapshot();
  }

  /**
   * Moves `durable` over every record whose append resolved, in order, running their callbacks —
   * the WAL resolves appends in order, but counting here does not depend on it — then releases
   * the sync() callers that were waiting for them.
   */
  private advance(): void {
    while (this.inFlight[0]?.done) {
      const item = this.inFlight.shift()!;
      this.durable = item.index;
      item.onDurable?.();
    }
    while (this.waiters.length > 0 && this.waiters[0].index <= this.durable) this.waiters.shift()!.resolve();
  }

  /**
   * Resolves once every record appended so far is durable and published: then an answer may
   * reveal anything the store did until now. (etcd's applyWait, a WaitTime on the applied index.)
   */
  sync(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.durable === this.appended) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ index: this.appended, resolve, reject }));
  }
  // #endregion append

  private fail(err: unknown): void {
    if (this.failure) return;
    this.failure =
      err instanceof WALError
        ? err
        : new WALError("wal: write failed", String(err), undefined, undefined, { cause: err });
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.failure);
    if (this.closed) return; // appends after close() are refused; that is no emergency
    this.log("error", "failed to save to the write-ahead log; stopping", { error: this.failure.message });
    this.opts.onFatal?.(this.failure);
  }

  // #region snapshot
  /**
   * Saves a snapshot once more than `snapshotCount` records were appended since the last one
   * (etcd's triggerSnapshot: `appliedi - snapi > SnapshotCount`). Called right after an append,
   * between two commits, so the state encoded here is exactly the state after the last record.
   * The WAL writes it in the background and then deletes the segments it covers; appends go on.
   */
  private maybeSnapshot(): void {
    if (this.sinceSnapshot <= this.snapshotCount || this.snapshotting || this.failure || this.closed) return;
    const rev = this.kv.head();
    const payload = encodeState(stateOf(this.kv, this.lessor));
    this.log("info", "triggering snapshot", {
      revision: rev,
      "records-since-snapshot": this.sinceSnapshot,
      "snapshot-count": this.snapshotCount,
    });
    this.sinceSnapshot = 0;
    this.snapshotting = this.wal
      .saveSnapshot(rev, payload)
      .then(
        () => this.log("info", "saved snapshot", { revision: rev, bytes: payload.length }),
        // The log still holds every record, so nothing is lost; the next try comes after another
        // snapshotCount records.
        (err: unknown) => this.log("warn", "failed to save snapshot", { revision: rev, error: String(err) }),
      )
      .finally(() => {
        this.snapshotting = undefined;
      });
  }
  // #endregion snapshot

  /** Waits for a snapshot being saved and for every appended record, then closes the WAL. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.snapshotting;
    await this.wal.close();
  }
}

/** The store's state right now, as a snapshot holds it. */
export function stateOf(kv: KVStore, lessor: Lessor): StoreState {
  return {
    rev: kv.head(),
    // The committed compaction: a snapshot covers every record appended so far, a compaction
    // still waiting for the disk included (restore carries it out).
    compactRev: kv.compactHead(),
    records: kv.backend.all(),
    leases: lessor.leases().map((l) => ({ id: l.id, ttl: l.ttl })),
  };
}

// #region open
/**
 * Opens the log in `opts.dir` (creating it if new), rebuilds `kv` and `lessor` from it — they
 * must be empty — and from then on logs every commit of `kv`. Damage on disk, or a record that
 * does not fit the state before it, is returned: the caller must not serve.
 */
export async function openStorage(
  kv: KVStore,
  lessor: Lessor,
  opts: StorageOptions,
): Promise<Storage | OpenStorageError> {
  const log = opts.logger ?? nopLogger;
  const opened = await WAL.open(opts.dir, { fsync: opts.fsync, log: (line) => log("info", line) });
  if (opened instanceof WALError || opened instanceof SnapError) return opened;
  const { wal, snapshot, records } = opened;

  const recovered = recover(kv, lessor, snapshot, records);
  if (recovered instanceof StorageError) {
    await wal.close();
    return recovered;
  }
  const keys = kv.range(new Uint8Array([0]), new Uint8Array([0]), { countOnly: true });
  log("info", "recovered the store from the data directory", {
    dir: opts.dir,
    "snapshot-revision": snapshot?.revision ?? 0,
    "records-replayed": records.length,
    "current-revision": kv.head(),
    "compact-revision": kv.compactRev(),
    keys: keys instanceof EtcdError ? 0 : keys.count,
    leases: lessor.leases().length,
  });

  const storage = new Storage(wal, kv, lessor, opts, records.length);
  kv.setCommitLog(storage);
  return storage;
}
// #endregion open

// #region recover
/** Loads the snapshot (if any), then redoes the records after it, in order. */
export function recover(
  kv: KVStore,
  lessor: Lessor,
  snapshot: Snapshot | undefined,
  records: readonly WALRecord[],
): StorageError | undefined {
  if (snapshot) {
    const state = decodeState(snapshot.payload);
    if (state instanceof StorageError) return state;
    if (state.rev !== snapshot.revision) {
      return doesNotApply(
        `the snapshot file is named for revision ${snapshot.revision} but holds revision ${state.rev}`,
      );
    }
    const why = restoreState(kv, lessor, state);
    if (why) return doesNotApply(`snapshot at revision ${snapshot.revision}: ${why}`);
  }
  for (const [i, record] of records.entries()) {
    const commit = decodeCommit(record.payload);
    if (commit instanceof StorageError) return commit;
    const why =
      commit.rev === record.revision
        ? replay(kv, lessor, commit)
        : `the record says revision ${commit.rev}, its frame ${record.revision}`;
    if (why) {
      return doesNotApply(
        `WAL record ${i + 1} of ${records.length} after the snapshot (${commit.type} at revision ${commit.rev}): ${why}`,
      );
    }
  }
  return undefined;
}

function doesNotApply(detail: string): StorageError {
  return new StorageError(
    "storage: record does not apply",
    `${detail}. The data directory is inconsistent; refusing to start rather than serve wrong data. ` +
      "Restore it from a backup.",
  );
}

/** Loads a snapshot into the empty store; returns what is wrong with it, if anything. */
function restoreState(kv: KVStore, lessor: Lessor, state: StoreState): string | undefined {
  for (const { id, ttl } of state.leases) {
    const lease = lessor.grant(id, ttl);
    if (lease instanceof EtcdError) return `lease ${id}: ${lease.message}`;
  }
  for (let i = 1; i < state.records.length; i++) {
    const [a, b] = [state.records[i - 1].rev, state.records[i].rev];
    if (b.main < a.main || (b.main === a.main && b.sub <= a.sub)) {
      return `record ${i} (${b.main}.${b.sub}) does not follow ${a.main}.${a.sub}`;
    }
  }
  kv.restore(state.records, state.compactRev);
  if (kv.head() !== state.rev) return `its records end at revision ${kv.head()}, but it says ${state.rev}`;
  // restore() attached each key to the lease in its KeyValue; a missing lease would leave a
  // key that never expires.
  const all = kv.range(new Uint8Array([0]), new Uint8Array([0]));
  if (all instanceof EtcdError) return all.message;
  const orphan = all.kvs.find((k) => k.lease !== 0 && lessor.getLease(k.key) !== k.lease);
  if (orphan)
    return `key ${JSON.stringify(toText(orphan.key))} names lease ${orphan.lease}, which it does not hold`;
  return undefined;
}

/**
 * Redoes one commit through the store's write path — the same code that made it — and checks the
 * result against the record. Returns what does not fit, if anything.
 */
function replay(kv: KVStore, lessor: Lessor, c: Commit): string | undefined {
  const head = kv.head();
  switch (c.type) {
    case "txn": {
      if (c.rev !== head + 1) return `a write takes the next revision, but the store is at ${head}`;
      const missing = c.changes.find((ch) => ch.lease !== 0 && !lessor.lookup(ch.lease));
      if (missing) return `it puts a key with lease ${missing.lease}, which does not exist`;
      const txn = kv.write();
      for (const ch of c.changes) {
        if (ch.createRevision === 0) txn.deleteRange(ch.key, undefined);
        else txn.put(ch.key, ch.value, ch.lease);
      }
      txn.end();
      return sameChanges(txn.changes, c.changes);
    }
    case "leaseRevoke": {
      const expected = c.changes.length > 0 ? head + 1 : head;
      if (c.rev !== expected) return `it should be at revision ${expected}`;
      if (!lessor.lookup(c.id)) return `lease ${c.id} does not exist`;
      lessor.revoke(c.id);
      const deleted = c.changes.length > 0 ? kv.backend.range(c.rev, c.rev + 1).map((r) => r.kv) : [];
      if (kv.head() !== c.rev) return `revoking it left the store at revision ${kv.head()}`;
      return sameChanges(deleted, c.changes);
    }
    case "leaseGrant": {
      if (c.rev !== head) return `it should be at revision ${head}`;
      const lease = lessor.grant(c.id, c.ttl);
      return lease instanceof EtcdError ? lease.message : undefined;
    }
    case "compaction": {
      if (c.rev !== head) return `it should be at revision ${head}`;
      const result = kv.compact(c.compactRev);
      return result instanceof EtcdError ? result.message : undefined;
    }
  }
}

/** Whether replay made exactly the recorded changes; if not, the first difference. */
function sameChanges(made: readonly KeyValue[], recorded: readonly KeyValue[]): string | undefined {
  if (made.length !== recorded.length)
    return `replay made ${made.length} changes, the record has ${recorded.length}`;
  for (const [i, m] of made.entries()) {
    const r = recorded[i];
    const same =
      compareBytes(m.key, r.key) === 0 &&
      compareBytes(m.value, r.value) === 0 &&
      m.createRevision === r.createRevision &&
      m.modRevision === r.modRevision &&
      m.version === r.version &&
      m.lease === r.lease;
    if (!same) return `change ${i} differs: replay made ${describe(m)}, the record has ${describe(r)}`;
  }
  return undefined;
}

function describe(kv: KeyValue): string {
  const key = JSON.stringify(toText(kv.key));
  if (kv.createRevision === 0) return `a deletion of ${key}`;
  return `${key} (create ${kv.createRevision}, mod ${kv.modRevision}, version ${kv.version}, lease ${kv.lease})`;
}
// #endregion recover
