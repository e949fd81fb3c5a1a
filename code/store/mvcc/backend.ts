/**
 * Backend — the key bucket: every stored KeyValue, found by its revision.
 *
 * Solves:
 * - the index says *which* revision holds a key's value; something must hold the values, and must
 *   also list "every change between revision A and B" for watchers catching up. etcd keeps both in
 *   one bbolt bucket whose keys are revisions (see revision.ts) and whose values are KeyValues: a
 *   B+tree ordered by revision. We keep the same thing in memory: an array ordered by revision.
 *
 * Invariants:
 * - `records` is sorted by revision, each revision at most once (writes only append, because
 *   revisions only grow);
 * - a record is a tombstone exactly when it records a deletion; its kv is `{key}` only;
 * - compaction is the only thing that removes records.
 *
 * Durability is not this file's job: the write-ahead log (wal*.ts) and snapshots make the store
 * survive a restart; this bucket is rebuilt from them.
 *
 * @upstream etcd-io/etcd server/mvcc/backend/backend.go (backend, the bbolt file)
 * @upstream etcd-io/etcd server/mvcc/buckets/bucket.go (Key)
 * @chapter 01-etcd-watch
 */

import type { KeyValue } from "../mvccpb/kv.ts";
import { panic } from "../rpctypes/error.ts";
import { compareRevisions, type Revision, type RevisionSet, revGreaterThan } from "./revision.ts";

export interface BackendRecord {
  readonly rev: Revision;
  readonly tombstone: boolean;
  readonly kv: KeyValue;
}

export class Backend {
  private records: BackendRecord[] = [];

  get size(): number {
    return this.records.length;
  }

  /** Stores a change; its revision must be newer than every stored one. */
  put(record: BackendRecord): void {
    const last = this.records[this.records.length - 1];
    if (last && !revGreaterThan(record.rev, last.rev)) {
      panic(
        `backend put out of order: ${record.rev.main}.${record.rev.sub} after ${last.rev.main}.${last.rev.sub}`,
      );
    }
    this.records.push(record);
  }

  /** The record stored at exactly this revision. */
  get(rev: Revision): BackendRecord | undefined {
    const i = this.lowerBound(rev);
    const r = this.records[i];
    return r && compareRevisions(r.rev, rev) === 0 ? r : undefined;
  }

  /** Records with minMain ≤ main < maxMain, in revision order: "what happened since". */
  range(minMain: number, maxMain: number): BackendRecord[] {
    return this.records.slice(
      this.lowerBound({ main: minMain, sub: 0 }),
      this.lowerBound({ main: maxMain, sub: 0 }),
    );
  }

  /**
   * Compaction's delete step: drops every record with main ≤ atMain that `keep` does not list.
   * Returns how many records went.
   */
  compact(atMain: number, keep: RevisionSet): number {
    const before = this.records.length;
    this.records = this.records.filter((r) => r.rev.main > atMain || keep.has(r.rev));
    return before - this.records.length;
  }

  /** All records in revision order (snapshots, restore, tests). */
  all(): readonly BackendRecord[] {
    return this.records;
  }

  private lowerBound(rev: Revision): number {
    let lo = 0;
    let hi = this.records.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareRevisions(this.records[mid].rev, rev) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
