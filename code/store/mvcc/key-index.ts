/**
 * KeyIndex — every revision at which one key changed, grouped into generations.
 *
 * Solves:
 * - "what was key K at revision R?" must be answered without scanning all history: the keyIndex
 *   of K lists K's revisions, and the value stored at that revision is one lookup away;
 * - a key can be deleted and created again; its `create_revision` and `version` must then start
 *   over, while reads at older revisions still see the old incarnation. Each incarnation is a
 *   *generation*: the revisions from a creation up to and including the deletion (tombstone).
 *
 * Example (etcd's own, from key_index.go): put@1, put@2, delete@3, put@4, delete@5 gives
 *
 *     generations: [ {1, 2, 3(t)}, {4, 5(t)}, {} ]
 *
 * Invariants:
 * - there is always at least one generation, and only the last one may be empty (it is the
 *   generation a re-creation will fill); every earlier generation ends with its tombstone;
 * - revisions only grow: across generations and inside each one;
 * - `generation.ver` counts the changes made in the generation (the tombstone included) since its
 *   creation, even those compaction has removed — so versions stay right after compaction;
 * - `modified` is the last revision put in, tombstone or not.
 *
 * @upstream etcd-io/etcd server/mvcc/key_index.go (keyIndex, generation)
 * @chapter 01-etcd-watch
 */
import { EtcdError, panic } from "../rpctypes/error.ts";
import { noRevision, type Revision, type RevisionSet, revGreaterThan, revision } from "./revision.ts";

/** The key has no revision at the asked point (never existed, or deleted then). Internal to mvcc. */
export const ErrRevisionNotFound = new EtcdError("Unknown", "mvcc: revision not found");

// #region generation
export interface Generation {
  /** Changes in this generation so far, the tombstone included; compaction does not lower it. */
  ver: number;
  /** The revision that created this incarnation of the key. */
  created: Revision;
  /** Every revision still kept, ascending; the last one is the tombstone if the generation is closed. */
  revs: Revision[];
}

function newGeneration(): Generation {
  return { ver: 0, created: noRevision, revs: [] };
}

function isEmptyGeneration(g: Generation | undefined): boolean {
  return !g || g.revs.length === 0;
}

/**
 * The position in `g.revs` of the newest revision whose main is ≤ atRev, or -1 if there is none.
 * etcd's `generation.walk` with the predicate `rev.main > atRev`.
 */
function newestAtOrBefore(g: Generation, atRev: number): number {
  for (let i = g.revs.length - 1; i >= 0; i--) {
    if (g.revs[i].main <= atRev) return i;
  }
  return -1;
}
// #endregion generation

export interface KeyIndexGet {
  /** The revision of the change visible at atRev: its value is stored under this revision. */
  modified: Revision;
  /** The creation of the incarnation visible at atRev (etcd's create_revision). */
  created: Revision;
  /** How many changes that incarnation had seen by `modified` (etcd's version; 1 on creation). */
  version: number;
}

// #region get
/**
 * The key as it was at revision atRev, read from its generations: the change visible then, the
 * creation of that incarnation and its version — or ErrRevisionNotFound if the key did not exist
 * at atRev. KeyIndex.get calls it (a pure function, so that it can be read and tested alone).
 */
export function getAtRev(generations: readonly Generation[], atRev: number): KeyIndexGet | EtcdError {
  const g = findGeneration(generations, atRev);
  if (!g) return ErrRevisionNotFound;
  const n = newestAtOrBefore(g, atRev);
  if (n === -1) return ErrRevisionNotFound;
  // ver counts to the newest change; each later revision in the generation is one change less.
  return { modified: g.revs[n], created: g.created, version: g.ver - (g.revs.length - n - 1) };
}

/**
 * The generation holding the key's state at `rev`, or undefined if the key did not exist then
 * (before its creation, or from a tombstone until the next creation).
 */
export function findGeneration(generations: readonly Generation[], rev: number): Generation | undefined {
  const last = generations.length - 1;
  for (let i = last; i >= 0; i--) {
    const g = generations[i];
    if (g.revs.length === 0) continue;
    // a closed generation's tombstone at or before rev: the key was deleted by then
    if (i !== last && g.revs[g.revs.length - 1].main <= rev) return undefined;
    if (g.revs[0].main <= rev) return g;
  }
  return undefined;
}
// #endregion get

export class KeyIndex {
  modified: Revision = noRevision;
  generations: Generation[] = [];

  constructor(readonly key: Uint8Array) {}

  // #region put-tombstone
  /** Records a change of the key (a put) at revision {main, sub}. */
  put(main: number, sub: number): void {
    const rev = revision(main, sub);
    if (!revGreaterThan(rev, this.modified)) {
      panic(`'put' with an unexpected smaller revision ${main}.${sub} (modified ${this.modified.main})`);
    }
    if (this.generations.length === 0) this.generations.push(newGeneration());
    const g = this.generations[this.generations.length - 1];
    if (g.revs.length === 0) g.created = rev; // the first change of a generation creates the key
    g.revs.push(rev);
    g.ver++;
    this.modified = rev;
  }

  /**
   * Records the deletion of the key: the tombstone closes the current generation and an empty one
   * is opened for a future re-creation. Deleting a key that does not exist is not a change.
   */
  tombstone(main: number, sub: number): EtcdError | undefined {
    if (this.isEmpty()) panic(`'tombstone' got an unexpected empty keyIndex`);
    if (isEmptyGeneration(this.generations[this.generations.length - 1])) return ErrRevisionNotFound;
    this.put(main, sub);
    this.generations.push(newGeneration());
    return undefined;
  }
  // #endregion put-tombstone

  /** The key as it was at revision atRev: which change was visible, its creation and version. */
  get(atRev: number): KeyIndexGet | EtcdError {
    if (this.isEmpty()) panic(`'get' got an unexpected empty keyIndex`);
    return getAtRev(this.generations, atRev);
  }

  // #region since
  /**
   * The key's revisions with main ≥ rev, ascending — what a watcher starting at rev must be told.
   * When one transaction changed the key twice, only the last change (highest sub) is returned:
   * the earlier one was never visible to a reader.
   */
  since(rev: number): Revision[] {
    if (this.isEmpty()) panic(`'since' got an unexpected empty keyIndex`);
    const since = revision(rev, 0);
    // Start at the newest generation created before `since`: older ones end before it.
    let gi = this.generations.length - 1;
    for (; gi > 0; gi--) {
      const g = this.generations[gi];
      if (g.revs.length === 0) continue;
      if (revGreaterThan(since, g.created)) break;
    }
    const revs: Revision[] = [];
    let last = 0;
    for (; gi < this.generations.length; gi++) {
      for (const r of this.generations[gi].revs) {
        if (revGreaterThan(since, r)) continue;
        if (r.main === last) {
          revs[revs.length - 1] = r;
          continue;
        }
        revs.push(r);
        last = r.main;
      }
    }
    return revs;
  }
  // #endregion since

  // #region compact
  /**
   * Forgets the revisions with main ≤ atRev except the newest of them, which still answers reads
   * at atRev. Generations that ended (tombstone) before atRev go entirely. The revisions kept at
   * or below atRev are added to `available`, so the backend can drop every other old value.
   * After this, `isEmpty()` tells the tree index to drop the key altogether.
   */
  compact(atRev: number, available: RevisionSet): void {
    if (this.isEmpty()) panic(`'compact' got an unexpected empty keyIndex`);
    const { genIdx, revIndex } = this.doCompact(atRev, available);
    const g = this.generations[genIdx];
    if (!isEmptyGeneration(g) && revIndex !== -1) g.revs = g.revs.slice(revIndex);
    this.generations = this.generations.slice(genIdx);
  }

  /**
   * Which revision `compact(atRev)` would keep, without compacting. Unlike compact, a tombstone at
   * exactly atRev is not reported (etcd's HashKV relies on this to hash the same on every member).
   */
  keep(atRev: number, available: RevisionSet): void {
    if (this.isEmpty()) return;
    const { genIdx, revIndex } = this.doCompact(atRev, available);
    const g = this.generations[genIdx];
    if (!isEmptyGeneration(g) && revIndex === g.revs.length - 1 && genIdx !== this.generations.length - 1) {
      available.delete(g.revs[revIndex]);
    }
  }

  private doCompact(atRev: number, available: RevisionSet): { genIdx: number; revIndex: number } {
    let genIdx = 0;
    // Skip the generations whose tombstone is older than atRev: nobody can read them any more.
    // A tombstone exactly at atRev is kept: a read at atRev must still see "deleted here" —
    // unless the same revision created the key again (a txn deleting a range from a key, then
    // putting the key): then the next generation holds what a read at atRev sees, and stopping
    // here would let the backend drop the live value while the index still points at it.
    // (etcd since v3.5.16 stops here: etcd-io/etcd issue #22376.)
    while (genIdx < this.generations.length - 1) {
      const g = this.generations[genIdx];
      const next = this.generations[genIdx + 1];
      const recreatedByAtRev = next.revs.length > 0 && next.revs[0].main <= atRev;
      if (g.revs[g.revs.length - 1].main >= atRev && !recreatedByAtRev) break;
      genIdx++;
    }
    const g = this.generations[genIdx];
    const revIndex = newestAtOrBefore(g, atRev);
    if (revIndex !== -1) available.add(g.revs[revIndex]);
    return { genIdx, revIndex };
  }
  // #endregion compact

  /** True when nothing is left: one generation, and it is empty. */
  isEmpty(): boolean {
    return this.generations.length === 1 && this.generations[0].revs.length === 0;
  }

  /**
   * Rebuilds a key from its newest stored value when loading a (possibly compacted) backend:
   * older revisions may be gone, so creation and version come from the stored KeyValue.
   */
  restore(created: Revision, modified: Revision, ver: number): void {
    if (this.generations.length !== 0) panic(`'restore' got an unexpected non-empty generations`);
    this.modified = modified;
    this.generations.push({ ver, created, revs: [modified] });
  }

  /** Like restore, when the first stored record of the key is its tombstone. */
  restoreTombstone(main: number, sub: number): void {
    this.restore(noRevision, revision(main, sub), 1);
    this.generations.push(newGeneration());
  }
}
