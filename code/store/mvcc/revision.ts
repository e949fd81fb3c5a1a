/**
 * Revision — the logical clock of the store: `{ main, sub }`.
 *
 * Solves:
 * - every change needs a position in one global order, so "the state at revision 7" and "every
 *   change after revision 7" are well defined; `main` counts write transactions;
 * - one transaction may change several keys atomically; they share one `main` and are told apart
 *   by `sub` (0, 1, 2, … in the order the transaction made them).
 *
 * Invariants:
 * - revisions are ordered by `main`, then `sub`;
 * - encoded as bytes (8 bytes big-endian `main`, `_`, 8 bytes big-endian `sub`), the byte order
 *   of two encodings equals the order of the revisions: that is why etcd can use revisions as the
 *   keys of its on-disk B+tree and read history as one ordered scan. A deletion appends the mark
 *   byte `t` (a tombstone).
 *
 * @upstream etcd-io/etcd server/mvcc/revision.go (revision, revToBytes, bytesToRev)
 * @upstream etcd-io/etcd server/mvcc/kvstore.go (appendMarkTombstone, isTombstone)
 * @chapter 01-etcd-watch
 */
import { panic } from "../rpctypes/error.ts";

// #region revision
export interface Revision {
  /** The main revision of a set of changes that happen atomically (one write transaction). */
  readonly main: number;
  /** The position of one change inside that set. */
  readonly sub: number;
}

export function revision(main: number, sub = 0): Revision {
  return { main, sub };
}

/** a > b in (main, sub) order — etcd's `revision.GreaterThan`. */
export function revGreaterThan(a: Revision, b: Revision): boolean {
  if (a.main !== b.main) return a.main > b.main;
  return a.sub > b.sub;
}

/** For `Array.prototype.sort`: ascending (main, sub). */
export function compareRevisions(a: Revision, b: Revision): number {
  return a.main !== b.main ? a.main - b.main : a.sub - b.sub;
}
// #endregion revision

export function revEqual(a: Revision, b: Revision): boolean {
  return a.main === b.main && a.sub === b.sub;
}

/** The zero revision: "no revision" (a key never created, a compacted creation). */
export const noRevision: Revision = Object.freeze({ main: 0, sub: 0 });

// #region rev-bytes
export const revBytesLen = 8 + 1 + 8;
export const markedRevBytesLen = revBytesLen + 1;
const markTombstone = "t".charCodeAt(0);

/** The 17-byte backend key of a revision; 18 bytes with the tombstone mark. */
export function revToBytes(rev: Revision, tombstone = false): Uint8Array {
  const bytes = new Uint8Array(tombstone ? markedRevBytesLen : revBytesLen);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, BigInt(rev.main));
  bytes[8] = "_".charCodeAt(0);
  view.setBigUint64(9, BigInt(rev.sub));
  if (tombstone) bytes[revBytesLen] = markTombstone;
  return bytes;
}

export function bytesToRev(bytes: Uint8Array): Revision {
  if (bytes.length < revBytesLen) panic(`revision bytes too short: ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { main: Number(view.getBigUint64(0)), sub: Number(view.getBigUint64(9)) };
}

export function isTombstone(bytes: Uint8Array): boolean {
  return bytes.length === markedRevBytesLen && bytes[revBytesLen] === markTombstone;
}
// #endregion rev-bytes

/**
 * A set of revisions compared by value (a JS `Set` of objects compares by identity). Compaction
 * uses it as etcd uses `map[revision]struct{}`: the revisions to keep.
 */
export class RevisionSet {
  private readonly items = new Map<string, Revision>();

  add(rev: Revision): void {
    this.items.set(`${rev.main}_${rev.sub}`, rev);
  }
  has(rev: Revision): boolean {
    return this.items.has(`${rev.main}_${rev.sub}`);
  }
  delete(rev: Revision): void {
    this.items.delete(`${rev.main}_${rev.sub}`);
  }
  get size(): number {
    return this.items.size;
  }
  /** In ascending revision order. */
  toArray(): Revision[] {
    return [...this.items.values()].sort(compareRevisions);
  }
}
