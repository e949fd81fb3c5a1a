/**
 * Range reads — what a read of the store asks for and what it gets back.
 *
 * Solves: a reader (a Range request, a txn's compare, a watcher's prev_kv) needs a few options
 * the store itself understands — the revision to read at, a limit, count only, keys only — and an
 * answer that says how many keys matched in all and how new the store was, whatever revision it
 * was asked to read at.
 *
 * Invariants:
 * - `kvs` is sorted by key, and `count` ≥ `kvs.length`; `more` is true exactly when the limit cut
 *   `kvs` short;
 * - `rev` is the store's revision at the read, not the revision read at.
 *
 * @upstream etcd-io/etcd server/mvcc/kv.go (RangeOptions, RangeResult)
 * @chapter 01-etcd-watch
 */
import type { KeyValue } from "../mvccpb/kv.ts";

/** The options of an mvcc range read. */
export interface RangeOptions {
  /** Read at this revision; 0 (or absent) = the current revision. */
  rev?: number;
  /** At most this many kvs; 0 (or absent) = no limit. `count` still counts every match. */
  limit?: number;
  /** Return only `count`, no kvs. */
  countOnly?: boolean;
  /** Return kvs with empty values. */
  keysOnly?: boolean;
}

export interface RangeResult {
  /** Sorted by key. */
  kvs: KeyValue[];
  /** Every key in the range at the revision read, whatever the limit. */
  count: number;
  /** True when the limit cut kvs short (count > kvs.length). */
  more: boolean;
  /** The store's current revision when the read happened (not the revision read at). */
  rev: number;
}
