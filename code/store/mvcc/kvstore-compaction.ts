/**
 * Compaction — forgetting history no one may read any more.
 *
 * Solves: an MVCC store keeps every version of every key, so it grows forever unless old versions
 * are dropped. Compacting at revision R promises: reads at R or later still work, reads before R
 * fail with "mvcc: required revision has been compacted", and everything only those older reads
 * needed is freed.
 *
 * Invariants (after compact(R)):
 * - for each key alive at R, exactly one revision ≤ R is kept: the one holding its value at R;
 * - a key deleted before R is gone entirely (its tombstone too); a tombstone exactly at R is kept,
 *   so a read or a watch at R still sees the deletion;
 * - every revision > R is untouched.
 *
 * @upstream etcd-io/etcd server/mvcc/kvstore_compaction.go (scheduleCompaction)
 * @chapter 01-etcd-watch
 */
import type { Backend } from "./backend.ts";
import type { TreeIndex } from "./index.ts";

export interface CompactionResult {
  /** Records still stored at or below the compaction revision. */
  kept: number;
  /** Records deleted from the backend. */
  removed: number;
}

// #region schedule-compaction
/**
 * Compacts the index first (it decides what to keep), then deletes from the backend every record
 * at or below compactMainRev that the index no longer points at.
 * etcd runs this in the background in batches of 1000 keys; ours runs at once.
 */
export function scheduleCompaction(
  index: TreeIndex,
  backend: Backend,
  compactMainRev: number,
): CompactionResult {
  const keep = index.compact(compactMainRev);
  const removed = backend.compact(compactMainRev, keep);
  return { kept: keep.size, removed };
}
// #endregion schedule-compaction
