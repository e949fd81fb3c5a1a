/**
 * WatcherGroup — a set of watchers, searchable by the key an event touches.
 * Mirrors etcd-io/etcd server/mvcc/watcher_group.go.
 *
 * Solves:
 * - every write must find the watchers interested in each changed key quickly: watchers on one key
 *   are found with a map lookup; watchers on a range are checked against the key;
 * - a watcher catching up must get history in bounded pieces: an `eventBatch` holds at most
 *   `watchBatchMaxRevs` distinct revisions and remembers where the next piece starts (`moreRev`),
 *   and it never splits one revision across two pieces — a transaction's events stay together.
 *
 * Invariants:
 * - a watcher is in `watchers` exactly when it is in `keyWatchers` (single-key watchers) or in
 *   `rangeWatchers` (the others);
 * - an eventBatch's events are in revision order; all events of one revision are in the same batch.
 *
 * etcd finds range watchers with an interval tree (pkg/adt) in O(log n); we scan them, O(n),
 * which is fine for the handful of range watches an API server holds.
 *
 * @upstream etcd-io/etcd server/mvcc/watcher_group.go (watcherGroup, eventBatch, watcherBatch, newWatcherBatch)
 * @chapter 01-etcd-watch
 */

import type { Event } from "../mvccpb/kv.ts";
import { mapKey } from "../pkg/bytes.ts";
import { inRange } from "./index.ts";
import type { Watcher } from "./watcher.ts";

/** The most distinct revisions sent to a catching-up watcher in one response. */
export const watchBatchMaxRevs = 1000;

// #region event-batch
export interface EventBatch {
  /** Revision-ordered events for one watcher. */
  evs: Event[];
  /** Distinct revisions seen (may count one past the limit: the revision that did not fit). */
  revs: number;
  /** The first revision that did not fit; 0 if everything fitted. */
  moreRev: number;
}

// #region add-to-batch
/** Adds an event unless the batch is full; a full batch records where to continue. */
export function addToBatch(eb: EventBatch, ev: Event, maxRevs = watchBatchMaxRevs): void {
  if (eb.revs > maxRevs) return; // already full
  const last = eb.evs[eb.evs.length - 1];
  if (!last) {
    eb.revs = 1;
    eb.evs.push(ev);
    return;
  }
  if (ev.kv.modRevision > last.kv.modRevision) {
    eb.revs++;
    if (eb.revs > maxRevs) {
      // A new revision would overflow: stop here, so this revision is sent whole next time.
      eb.moreRev = ev.kv.modRevision;
      return;
    }
  }
  eb.evs.push(ev);
}
// #endregion add-to-batch

export type WatcherBatch = Map<Watcher, EventBatch>;

/**
 * Which events each watcher of the group must get: those on its keys, from its minRev on
 * (older ones it has already been sent — "don't double notify").
 */
export function newWatcherBatch(wg: WatcherGroup, evs: Event[], maxRevs = watchBatchMaxRevs): WatcherBatch {
  const wb: WatcherBatch = new Map();
  if (wg.size === 0) return wb;
  for (const ev of evs) {
    for (const w of wg.watcherSetByKey(ev.kv.key)) {
      if (ev.kv.modRevision < w.minRev) continue;
      let eb = wb.get(w);
      if (!eb) {
        eb = { evs: [], revs: 0, moreRev: 0 };
        wb.set(w, eb);
      }
      addToBatch(eb, ev, maxRevs);
    }
  }
  return wb;
}
// #endregion event-batch

// #region watcher-group
export class WatcherGroup {
  /** Watchers of a single key, by key. */
  private readonly keyWatchers = new Map<string, Set<Watcher>>();
  /** Watchers of a range ("from key" or [key, end)). */
  private readonly rangeWatchers = new Set<Watcher>();
  /** Every watcher in the group. */
  readonly watchers = new Set<Watcher>();

  get size(): number {
    return this.watchers.size;
  }

  has(w: Watcher): boolean {
    return this.watchers.has(w);
  }

  add(w: Watcher): void {
    this.watchers.add(w);
    if (w.range.kind !== "single") {
      this.rangeWatchers.add(w);
      return;
    }
    const k = mapKey(w.range.key);
    let set = this.keyWatchers.get(k);
    if (!set) {
      set = new Set();
      this.keyWatchers.set(k, set);
    }
    set.add(w);
  }

  /** Removes w; false if it was not in the group. */
  delete(w: Watcher): boolean {
    if (!this.watchers.delete(w)) return false;
    if (w.range.kind !== "single") {
      this.rangeWatchers.delete(w);
      return true;
    }
    const k = mapKey(w.range.key);
    const set = this.keyWatchers.get(k);
    set?.delete(w);
    if (set?.size === 0) this.keyWatchers.delete(k);
    return true;
  }

  /** Whether any watcher in the group watches this key. */
  contains(key: Uint8Array): boolean {
    if (this.keyWatchers.has(mapKey(key))) return true;
    for (const w of this.rangeWatchers) if (inRange(w.range, key)) return true;
    return false;
  }

  /** The watchers that must hear about a change of this key. */
  watcherSetByKey(key: Uint8Array): Set<Watcher> {
    const result = new Set(this.keyWatchers.get(mapKey(key)));
    for (const w of this.rangeWatchers) if (inRange(w.range, key)) result.add(w);
    return result;
  }

  /**
   * Up to maxWatchers watchers to sync in one round, so one round's history read stays bounded.
   * (etcd returns them as a new group; syncWatchers builds that group from this list.)
   */
  choose(maxWatchers: number): Watcher[] {
    const chosen: Watcher[] = [];
    for (const w of this.watchers) {
      if (chosen.length >= maxWatchers) break;
      chosen.push(w);
    }
    return chosen;
  }
}
// #endregion watcher-group
