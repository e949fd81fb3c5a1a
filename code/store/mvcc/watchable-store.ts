/**
 * WatchableStore — the store plus its watchers.
 * Mirrors etcd-io/etcd server/mvcc/watchable_store.go.
 *
 * Solves: a client that watches from revision R must see every change after R exactly once, in
 * order, even if R is far in the past and writes keep coming — and no watcher, however slow, may
 * hold up a write.
 *
 * How:
 * - a write notifies only the *synced* watchers (caught up to the store), right when it is
 *   published (at commit in memory; once on disk with storage — see kvstore.ts); everything here
 *   reads `currentRev`, the published revision, so no watcher sees an unpublished write;
 * - a watcher starting in the past is *unsynced*: `syncWatchers()` (every 100 ms, and at once when
 *   there is new work) reads the history it missed from the backend and sends it in batches until
 *   it has caught up, then moves it to `synced`;
 * - a send never waits: if a watcher's buffer is full, the watcher becomes a *victim* holding the
 *   events it missed; `moveVictims()` retries later and puts it back where it belongs.
 *
 * Invariants:
 * - every watcher is in exactly one place: `synced`, `unsynced`, a batch of `victims`, or nowhere
 *   (cancelled, or cancelled by compaction);
 * - a watcher has been sent every event it wants below its `minRev`, and none at or above it;
 * - a synced watcher's minRev is currentRev + 1 (or its future start revision);
 * - an unsynced watcher's minRev is ≤ currentRev: it still has history to read.
 *
 * @upstream etcd-io/etcd server/mvcc/watchable_store.go (watchableStore, syncWatchers, notify, moveVictims, progressIfSync)
 * @upstream etcd-io/etcd server/mvcc/watchable_store_txn.go (watchableStoreTxnWrite.End)
 * @chapter 01-etcd-watch
 */

import type { Event, KeyValue } from "../mvccpb/kv.ts";
import { type Clock, realClock, type Timer } from "../pkg/clock.ts";
import { panic } from "../rpctypes/error.ts";
import type { BackendRecord } from "./backend.ts";
import type { KeyRange } from "./index.ts";
import { KVStore, type KVStoreOptions } from "./kvstore.ts";
import {
  type FilterFunc,
  InvalidWatchID,
  type Watchable,
  Watcher,
  type WatchSink,
  WatchStream,
  type WatchStreamOptions,
} from "./watcher.ts";
import { newWatcherBatch, type WatcherBatch, WatcherGroup, watchBatchMaxRevs } from "./watcher-group.ts";

export interface WatchableStoreOptions extends KVStoreOptions {
  clock?: Clock;
  /** How often syncWatchers runs while watchers are unsynced, in ms (etcd: 100). */
  watchResyncInterval?: number;
  /** How often victims are retried while there are any, in ms (etcd: 10). */
  victimRetryInterval?: number;
  /** Watchers synced per round (etcd: 512). */
  maxWatchersPerSync?: number;
  /** Distinct revisions per catch-up response (etcd: 1000). */
  watchBatchMaxRevs?: number;
  /**
   * Decides which events each watcher gets, for writes and catch-up alike. Always
   * newWatcherBatch in the store; the course's sync-watchers exercise passes the learner's.
   */
  newWatcherBatch?: (wg: WatcherGroup, evs: Event[], maxRevs: number) => WatcherBatch;
}

export class WatchableStore extends KVStore implements Watchable {
  readonly synced = new WatcherGroup();
  readonly unsynced = new WatcherGroup();
  /** Batches whose send failed; each watcher in one of them is marked `victim`. */
  victims: WatcherBatch[] = [];

  readonly clock: Clock;
  private readonly watchResyncInterval: number;
  private readonly victimRetryInterval: number;
  private readonly maxWatchersPerSync: number;
  private readonly batchMaxRevs: number;
  private readonly newWatcherBatch: (wg: WatcherGroup, evs: Event[], maxRevs: number) => WatcherBatch;
  private syncTimer?: { timer: Timer; due: number };
  private victimTimer?: { timer: Timer; due: number };
  private closed = false;

  constructor(opts: WatchableStoreOptions = {}) {
    super(opts);
    this.clock = opts.clock ?? realClock;
    this.watchResyncInterval = opts.watchResyncInterval ?? 100;
    this.victimRetryInterval = opts.victimRetryInterval ?? 10;
    this.maxWatchersPerSync = opts.maxWatchersPerSync ?? 512;
    this.batchMaxRevs = opts.watchBatchMaxRevs ?? watchBatchMaxRevs;
    this.newWatcherBatch = opts.newWatcherBatch ?? newWatcherBatch;
  }

  /** A new stream (one client's Watch call) on this store. */
  newWatchStream(opts: WatchStreamOptions = {}): WatchStream {
    return new WatchStream(this, { clock: this.clock, ...opts });
  }

  // #region watch
  /**
   * Registers a watcher. startRev 0 means "from the next revision"; a start revision in the
   * future waits for it; any other is history, so the watcher starts unsynced.
   */
  watch(range: KeyRange, startRev: number, id: number, sink: WatchSink, filters: FilterFunc[] = []): Watcher {
    const w = new Watcher(range, startRev, id, sink, filters);
    const synced = startRev > this.currentRev || startRev === 0;
    if (synced) {
      w.minRev = Math.max(this.currentRev + 1, startRev);
      this.synced.add(w);
    } else {
      this.unsynced.add(w);
      this.kickSync();
    }
    return w;
  }

  /** Removes a watcher from wherever it is; it will be sent nothing more. */
  cancelWatcher(w: Watcher): void {
    if (this.unsynced.delete(w) || this.synced.delete(w) || w.compacted) return;
    for (const batch of this.victims) {
      if (batch.delete(w)) return;
    }
  }
  // #endregion watch

  // #region notify
  /**
   * A write was published — at its commit, or, when the store has a commit log, once it is on
   * disk, so no watcher ever sees a write a crash could lose: turn its changes into events and
   * tell the synced watchers.
   */
  protected override publish(rev: number, changes: readonly KeyValue[]): void {
    super.publish(rev, changes);
    const evs = changes.map(
      (kv): Event =>
        // a deletion is stored without a revision; the event carries the one it happened at
        kv.createRevision === 0 ? { type: "DELETE", kv: { ...kv, modRevision: rev } } : { type: "PUT", kv },
    );
    this.notify(rev, evs);
  }

  /**
   * Sends one revision's events to the synced watchers that want them, in one response each.
   * A watcher whose buffer is full is not waited for: it becomes a victim with its events.
   */
  notify(rev: number, evs: Event[]): void {
    const victim: WatcherBatch = new Map();
    for (const [w, eb] of this.newWatcherBatch(this.synced, evs, this.batchMaxRevs)) {
      if (eb.revs !== 1) panic(`unexpected multiple revisions in watch notification: ${eb.revs}`);
      if (!w.send({ watchId: w.id, events: eb.evs, revision: rev })) {
        w.victim = true;
        victim.set(w, eb);
        this.synced.delete(w);
      }
      // Sent or parked with the victim batch: either way these events are handled.
      w.minRev = rev + 1;
    }
    this.addVictim(victim);
  }
  // #endregion notify

  // #region sync-watchers
  /**
   * One catch-up round: picks unsynced watchers, reads the history they miss from the backend
   * (from the lowest minRev among them to now) and sends each its part. A watcher whose part was
   * cut (more than batchMaxRevs revisions) stays unsynced for the next round; one that got
   * everything becomes synced. Returns how many watchers are still unsynced.
   */
  syncWatchers(): number {
    if (this.unsynced.size === 0) return 0;
    const curRev = this.currentRev;
    const compactionRev = this.compactMainRev;

    const chosen = new WatcherGroup();
    let minRev = Number.POSITIVE_INFINITY;
    for (const w of this.unsynced.choose(this.maxWatchersPerSync)) {
      if (w.minRev < compactionRev) {
        // Its history is gone: cancel it, telling the client the oldest revision left.
        // If the buffer is full, try again next round. (etcd does this in watcherGroup.chooseAll.)
        if (w.send({ watchId: w.id, events: [], revision: 0, compactRevision: compactionRev })) {
          w.compacted = true;
          this.unsynced.delete(w);
        }
        continue;
      }
      chosen.add(w);
      minRev = Math.min(minRev, w.minRev);
    }
    if (chosen.size === 0) return this.unsynced.size;

    const evs = recordsToEvents(chosen, this.backend.range(minRev, curRev + 1));
    const wb = this.newWatcherBatch(chosen, evs, this.batchMaxRevs);
    const victims: WatcherBatch = new Map();
    for (const w of chosen.watchers) {
      w.minRev = Math.max(curRev + 1, w.minRev);
      const eb = wb.get(w);
      if (!eb) {
        // nothing it wants happened: it is caught up
        this.unsynced.delete(w);
        this.synced.add(w);
        continue;
      }
      if (eb.moreRev !== 0) w.minRev = eb.moreRev;
      if (!w.send({ watchId: w.id, events: eb.evs, revision: curRev })) {
        w.victim = true;
        victims.set(w, eb);
        this.unsynced.delete(w);
        continue;
      }
      if (eb.moreRev !== 0) continue; // more history to send next round
      this.unsynced.delete(w);
      this.synced.add(w);
    }
    this.addVictim(victims);
    return this.unsynced.size;
  }
  // #endregion sync-watchers

  // #region victims
  private addVictim(victim: WatcherBatch): void {
    if (victim.size === 0) return;
    this.victims.push(victim);
    this.kickVictims();
  }

  // #region move-victims
  /**
   * Retries the sends that found a full buffer. A watcher whose send now succeeds goes back to
   * unsynced (if more happened meanwhile) or synced. Returns how many sends succeeded.
   */
  moveVictims(): number {
    const victims = this.victims;
    this.victims = [];
    let moved = 0;
    const stillBlocked: WatcherBatch = new Map();
    for (const wb of victims) {
      for (const [w, eb] of wb) {
        // the watcher has observed the store up to, but not including, minRev
        if (w.send({ watchId: w.id, events: eb.evs, revision: w.minRev - 1 })) moved++;
        else stillBlocked.set(w, eb);
      }
      for (const [w, eb] of wb) {
        if (stillBlocked.has(w)) continue;
        w.victim = false;
        if (eb.moreRev !== 0) w.minRev = eb.moreRev;
        if (w.minRev <= this.currentRev) {
          this.unsynced.add(w);
          this.kickSync();
        } else {
          this.synced.add(w);
        }
      }
    }
    if (stillBlocked.size > 0) this.victims.push(stillBlocked);
    return moved;
  }
  // #endregion move-victims

  /** Asks for a victim retry soon (a reader freed buffer space). */
  kickVictims(): void {
    if (this.victims.length > 0) this.scheduleVictims(0);
  }

  private syncVictimsLoop(): void {
    while (this.moveVictims() !== 0) {
      // keep going while sends succeed
    }
    if (this.victims.length > 0) this.scheduleVictims(this.victimRetryInterval);
  }

  private scheduleVictims(delay: number): void {
    if (this.closed) return;
    this.victimTimer = reschedule(this.clock, this.victimTimer, delay, () => {
      this.victimTimer = undefined;
      this.syncVictimsLoop();
    });
  }
  // #endregion victims

  // #region sync-loop
  /** Asks for a syncWatchers round soon (a watcher from the past just arrived). */
  private kickSync(): void {
    this.scheduleSync(0);
  }

  private syncWatchersLoop(): void {
    const before = this.unsynced.size;
    const after = before > 0 ? this.syncWatchers() : 0;
    if (after === 0) return; // nothing left: the next watcher from the past kicks the loop again
    // More to do and progress made: go again at once; otherwise wait, to be fair to writers.
    this.scheduleSync(after < before ? 0 : this.watchResyncInterval);
  }

  private scheduleSync(delay: number): void {
    if (this.closed) return;
    this.syncTimer = reschedule(this.clock, this.syncTimer, delay, () => {
      this.syncTimer = undefined;
      this.syncWatchersLoop();
    });
  }
  // #endregion sync-loop

  // #region progress
  /** A progress notification for w, if it is synced. */
  progress(w: Watcher): boolean {
    return this.progressIfSync([w], w.id);
  }

  /** One progress notification (watch id -1) if every given watcher is synced. */
  progressAll(watchers: Watcher[]): boolean {
    return this.progressIfSync(watchers, InvalidWatchID);
  }

  /**
   * A progress notification says "you have every event up to revision R". That is only true of
   * a synced watcher (an unsynced one still has history coming), and only once R has reached its
   * start revision; otherwise nothing is sent.
   */
  private progressIfSync(watchers: Watcher[], responseWatchID: number): boolean {
    const rev = this.currentRev;
    for (const w of watchers) {
      if (!this.synced.has(w) || rev < w.startRev) return false;
    }
    // All watchers of a stream share its buffer: one response on the first one reaches them all.
    watchers[0]?.send({ watchId: responseWatchID, events: [], revision: rev });
    return true;
  }
  // #endregion progress

  /** Stops the timers. Watchers stay registered but are no longer synced in the background. */
  close(): void {
    this.closed = true;
    this.syncTimer?.timer.cancel();
    this.victimTimer?.timer.cancel();
  }
}

/** The history records that concern the group, as events (etcd's kvsToEvents). */
function recordsToEvents(wg: WatcherGroup, records: readonly BackendRecord[]): Event[] {
  const evs: Event[] = [];
  for (const rec of records) {
    if (!wg.contains(rec.kv.key)) continue;
    evs.push(
      rec.tombstone
        ? // patch in the mod revision, which a tombstone does not store, so watchers don't skip it
          { type: "DELETE", kv: { ...rec.kv, modRevision: rec.rev.main } }
        : { type: "PUT", kv: rec.kv },
    );
  }
  return evs;
}

/** Keeps the earlier of a pending timer and a new one due after `delay`. */
function reschedule(
  clock: Clock,
  pending: { timer: Timer; due: number } | undefined,
  delay: number,
  fn: () => void,
): { timer: Timer; due: number } {
  const due = clock.now() + delay;
  if (pending && pending.due <= due) return pending;
  pending?.timer.cancel();
  return { timer: clock.setTimer(delay, fn), due };
}
