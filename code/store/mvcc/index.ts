/**
 * TreeIndex — every key the store knows, in byte order, each with its keyIndex.
 *
 * Solves:
 * - a range read (`/registry/pods/` … `/registry/pods0`) must find its keys without looking at
 *   the others: keys are kept sorted, found by binary search, and read in order;
 * - requests name ranges the way etcd's API does (`range_end`): empty for one key, a single zero
 *   byte for "every key from `key` on", otherwise the half-open interval [key, range_end).
 *   `keyRange` decodes that once, so no other code re-interprets it.
 *
 * Invariants:
 * - `items` is sorted by key in byte order (compareBytes) and holds each key at most once;
 * - every keyIndex in `items` has at least one revision (compaction removes empty ones).
 *
 * Cost: lookups are O(log n). etcd keeps keyIndexes in a B-tree (google/btree, degree 32), so an
 * insert is O(log n) too; our sorted array pays O(n) to insert a *new* key (existing keys only
 * append to their own keyIndex). Fine for the course; a benchmark shows where it starts to hurt.
 *
 * @upstream etcd-io/etcd server/mvcc/index.go (treeIndex, index)
 * @upstream etcd-io/etcd client/v3/op.go (GetPrefixRangeEnd, getPrefix)
 * @upstream etcd-io/etcd server/etcdserver/apply.go (mkGteRange)
 * @chapter 01-etcd-watch
 */
import { compareBytes } from "../pkg/bytes.ts";
import type { EtcdError } from "../rpctypes/error.ts";
import { ErrRevisionNotFound, KeyIndex, type KeyIndexGet } from "./key-index.ts";
import { compareRevisions, type Revision, RevisionSet } from "./revision.ts";

// #region key-range
/** A range of keys as etcd's `key` + `range_end` spell it, decoded. */
export type KeyRange =
  | { readonly kind: "single"; readonly key: Uint8Array }
  | { readonly kind: "from"; readonly key: Uint8Array }
  | { readonly kind: "between"; readonly key: Uint8Array; readonly end: Uint8Array };

/**
 * Decodes etcd's range convention:
 * - no `rangeEnd` (or an empty one): just `key`;
 * - `rangeEnd` = one zero byte ("\0"): every key ≥ `key` (with key "\0" too: all keys);
 * - otherwise: every key in [key, rangeEnd) — empty if rangeEnd ≤ key.
 */
export function keyRange(key: Uint8Array, rangeEnd?: Uint8Array): KeyRange {
  if (!rangeEnd || rangeEnd.length === 0) return { kind: "single", key };
  if (rangeEnd.length === 1 && rangeEnd[0] === 0) return { kind: "from", key };
  return { kind: "between", key, end: rangeEnd };
}

export function inRange(r: KeyRange, k: Uint8Array): boolean {
  const c = compareBytes(k, r.key);
  switch (r.kind) {
    case "single":
      return c === 0;
    case "from":
      return c >= 0;
    case "between":
      return c >= 0 && compareBytes(k, r.end) < 0;
  }
}

/**
 * The range_end that selects every key starting with `prefix` (etcdctl --prefix): the prefix with
 * its last byte that is below 0xff incremented, dropping the 0xff bytes after it. A prefix of only
 * 0xff bytes (or an empty one) has no such end: every key ≥ prefix ("\0") is the answer.
 */
export function prefixEnd(prefix: Uint8Array): Uint8Array {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = prefix.slice(0, i + 1);
      end[i]++;
      return end;
    }
  }
  return new Uint8Array([0]);
}
// #endregion key-range

export class TreeIndex {
  /** Sorted by key; see the invariants above. */
  private items: KeyIndex[] = [];

  get size(): number {
    return this.items.length;
  }

  // #region lookup
  /** Position of the first keyIndex whose key is ≥ key (binary search). */
  private lowerBound(key: Uint8Array): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(this.items[mid].key, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  keyIndex(key: Uint8Array): KeyIndex | undefined {
    const i = this.lowerBound(key);
    const ki = this.items[i];
    return ki && compareBytes(ki.key, key) === 0 ? ki : undefined;
  }

  /** Calls f for each keyIndex in the range, in key order. */
  private visit(r: KeyRange, f: (ki: KeyIndex) => void): void {
    if (r.kind === "single") {
      const ki = this.keyIndex(r.key);
      if (ki) f(ki);
      return;
    }
    for (let i = this.lowerBound(r.key); i < this.items.length; i++) {
      const ki = this.items[i];
      if (r.kind === "between" && compareBytes(ki.key, r.end) >= 0) return;
      f(ki);
    }
  }
  // #endregion lookup

  // #region writes
  put(key: Uint8Array, rev: Revision): void {
    let ki = this.keyIndex(key);
    if (!ki) {
      ki = new KeyIndex(key);
      this.insert(ki);
    }
    ki.put(rev.main, rev.sub);
  }

  tombstone(key: Uint8Array, rev: Revision): EtcdError | undefined {
    const ki = this.keyIndex(key);
    if (!ki) return ErrRevisionNotFound;
    return ki.tombstone(rev.main, rev.sub);
  }

  /** Adds a keyIndex built elsewhere (restore); replaces one with the same key. */
  insert(ki: KeyIndex): void {
    const i = this.lowerBound(ki.key);
    const same = this.items[i] && compareBytes(this.items[i].key, ki.key) === 0;
    this.items.splice(i, same ? 1 : 0, ki); // O(n): see the cost note in the header
  }
  // #endregion writes

  // #region reads
  get(key: Uint8Array, atRev: number): KeyIndexGet | EtcdError {
    const ki = this.keyIndex(key);
    if (!ki) return ErrRevisionNotFound;
    return ki.get(atRev);
  }

  /** The keys alive at atRev in the range, with the revision holding each one's value. */
  range(
    key: Uint8Array,
    rangeEnd: Uint8Array | undefined,
    atRev: number,
  ): { keys: Uint8Array[]; revs: Revision[] } {
    const keys: Uint8Array[] = [];
    const revs: Revision[] = [];
    this.visit(keyRange(key, rangeEnd), (ki) => {
      const got = ki.get(atRev);
      if (!(got instanceof Error)) {
        keys.push(ki.key);
        revs.push(got.modified);
      }
    });
    return { keys, revs };
  }

  /**
   * Like range, but returns at most `limit` revisions (0 = no limit) while still counting every
   * match in `total`: a limited read must report how many keys there are in all.
   */
  revisions(
    key: Uint8Array,
    rangeEnd: Uint8Array | undefined,
    atRev: number,
    limit: number,
  ): { revs: Revision[]; total: number } {
    const revs: Revision[] = [];
    let total = 0;
    this.visit(keyRange(key, rangeEnd), (ki) => {
      const got = ki.get(atRev);
      if (got instanceof Error) return;
      if (limit <= 0 || revs.length < limit) revs.push(got.modified);
      total++;
    });
    return { revs, total };
  }

  countRevisions(key: Uint8Array, rangeEnd: Uint8Array | undefined, atRev: number): number {
    let total = 0;
    this.visit(keyRange(key, rangeEnd), (ki) => {
      if (!(ki.get(atRev) instanceof Error)) total++;
    });
    return total;
  }

  /** Every revision (main ≥ rev) of the keys in the range, in revision order. */
  rangeSince(key: Uint8Array, rangeEnd: Uint8Array | undefined, rev: number): Revision[] {
    const revs: Revision[] = [];
    this.visit(keyRange(key, rangeEnd), (ki) => {
      revs.push(...ki.since(rev));
    });
    return revs.sort(compareRevisions);
  }
  // #endregion reads

  // #region compact
  /**
   * Compacts every keyIndex at rev and drops the keys left with nothing. Returns the revisions
   * still needed (one per key at most, ≤ rev): the backend may delete every other revision ≤ rev.
   */
  compact(rev: number): RevisionSet {
    const available = new RevisionSet();
    for (const ki of this.items) ki.compact(rev, available);
    this.items = this.items.filter((ki) => !ki.isEmpty());
    return available;
  }
  // #endregion compact

  /** What compact(rev) would keep, without changing anything (etcd's HashKV uses it). */
  keep(rev: number): RevisionSet {
    const available = new RevisionSet();
    for (const ki of this.items) ki.keep(rev, available);
    return available;
  }

  /** Every keyIndex in key order (read-only use: tests, restore checks). */
  all(): readonly KeyIndex[] {
    return this.items;
  }
}
