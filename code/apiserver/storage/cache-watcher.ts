/**
 * cacheWatcher — one client watch served by the watch cache: the events the cacher hands it,
 * filtered by the client's selectors, buffered until the watch handler takes them.
 * Upstream: k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go.
 *
 * Solves:
 * - a selector decides per event whether the client sees it, and what as: an object that starts
 *   matching is ADDED, one that stops matching is DELETED (convertToWatchEvent), so a kubelet
 *   watching `spec.nodeName=node-1` sees a pod arrive when it is bound and leave when it moves;
 * - fan-out whose cost per event does not grow with the watchers: every watcher that is sent an
 *   event gets the same frozen event object, and its encodings are cached on it
 *   (caching-object.ts), built once per event rather than once per watcher;
 * - a slow client must not hold up the others: the buffer is bounded, it fills only while the
 *   client does not read (the handler stops taking events when the socket is full), and a full
 *   buffer makes the watcher "blocked" — the cacher then waits for it a little, within its time
 *   budget (time-budget.ts), and closes it if it is still blocked after that; its client then
 *   re-watches from its last resourceVersion;
 * - a client that keeps up is never blocked, however big the rounds: the events of the round
 *   being handed over are "in flight" (upstream's goroutine drains the channel while the
 *   dispatcher fills it); only events left over from an earlier round that the handler has not
 *   taken count against the buffer;
 * - a client idle on a quiet resource still learns how far the stream has got: a watcher that
 *   asked for bookmarks gets one every `bookmarkFrequencyMs`, and 2 s before its deadline, so it
 *   can resume from there instead of from a revision compaction may have removed.
 *
 * Invariants:
 * - events leave in resourceVersion order, each at most once, none at or below the
 *   resourceVersion the watch started from;
 * - the initial events are not counted against the buffer (the client asked for all of them);
 *   live events and bookmarks are, and a bookmark never closes a watcher (it is skipped instead).
 *
 * What upstream does differently: a goroutine per watcher reads a channel of that size, event by
 * event, and the dispatcher blocks on a full one; here one thread, so the buffer is an array the
 * handler takes a batch at a time, "full" is judged per round, and the cacher's waiting is a
 * pause between rounds rather than a blocked send.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go (cacheWatcher: add, nonblockingAdd, "Forcing … watcher close due to unresponsiveness", nextBookmarkTime, convertToWatchEvent, stopLocked)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (setCachingObjects: one shared event per change; filterWithAttrsAndPrefixFunction)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { CachingObject, cachingObjectFor } from "./caching-object.ts";
import type { SelectionPredicate, StorageWatchEvent, Watch } from "./interfaces.ts";
import type { WatchCacheEvent } from "./watch-cache.ts";

/** Is a key inside what the request named: the key itself, or anything under `<key>/`? */
export function scopeTest(key: string, recursive: boolean): (k: string) => boolean {
  if (!recursive) return (k) => k === key;
  const prefix = key.endsWith("/") ? key : `${key}/`;
  return (k) => k.startsWith(prefix);
}

type ChangeType = WatchCacheEvent["type"];

/**
 * The watch events built from one cache event — at most one per type — shared by every watcher
 * that is sent it: a thousand watchers cost a thousand references, not a thousand objects.
 */
const sharedEvents = new WeakMap<WatchCacheEvent, Partial<Record<ChangeType, StorageWatchEvent>>>();

function sharedEvent(ev: WatchCacheEvent, type: ChangeType): StorageWatchEvent {
  let built = sharedEvents.get(ev);
  if (!built) {
    built = {};
    sharedEvents.set(ev, built);
  }
  let out = built[type];
  if (!out) {
    const c = type === "DELETED" ? new CachingObject(deletedObject(ev)) : cachingObjectFor(ev.object);
    out = Object.freeze({ type, object: c.object, cachingObject: c });
    built[type] = out;
  }
  return out;
}

/**
 * The previous object stamped with the event's resourceVersion (what a watcher whose selector
 * the object left is sent as DELETED) — built once per event, not once per watcher, as upstream's
 * setCachingObjects does. A shallow copy is enough: only metadata.resourceVersion differs, and
 * everything else is frozen and shared with the cached previous object.
 */
function deletedObject(ev: WatchCacheEvent): KubeObject {
  const prev = ev.prevObject as KubeObject;
  return { ...prev, metadata: { ...prev.metadata, resourceVersion: String(ev.resourceVersion) } };
}

/** At most this many initial events are handed over at once, so a huge first batch is split. */
const maxInitialBatch = 1000;

// #region cache-watcher
interface CacheWatcherOptions {
  key: string;
  recursive: boolean;
  predicate: SelectionPredicate;
  startRv: number;
  bufferSize: number;
  allowBookmarks: boolean;
  bookmarkFrequencyMs: number;
  deadline?: number;
  newFunc: () => KubeObject;
  onStop: (w: CacheWatcher) => void;
  /** Called each time the handler takes the buffered events (a blocked watcher is unblocked). */
  onTaken?: (w: CacheWatcher) => void;
}

/**
 * cacheWatcher: one client watch. Its buffer holds what the cacher has handed it and its handler
 * has not taken yet; the handler takes everything at once (nextBatch), and stops taking while
 * its client's socket is full — so a client that does not read fills the buffer, and a full
 * buffer is what gets the watcher closed. The initial events are queued without limit (the
 * client asked for all of them); live events count against `bufferSize`.
 */
export class CacheWatcher implements Watch {
  private initial: StorageWatchEvent[] = [];
  private buffer: StorageWatchEvent[] = [];
  private lastRv: number;
  private nextBookmarkAt: number | undefined;
  private stopped = false;
  private wake?: () => void;
  private readonly inScope: (k: string) => boolean;

  constructor(private readonly opts: CacheWatcherOptions) {
    this.lastRv = opts.startRv;
    this.inScope = scopeTest(opts.key, opts.recursive);
    this.nextBookmarkAt = this.nextBookmarkTime(Date.now());
  }

  setInitial(events: WatchCacheEvent[]): void {
    for (const ev of events) {
      const out = this.convertToWatchEvent(ev);
      if (out) this.initial.push(out);
      // The ring may hold events the cacher has not dispatched yet; when their round comes,
      // addAll must skip them, or the client gets them twice (processInterval advances its
      // resourceVersion the same way). Found by the informer's fault tests.
      this.lastRv = Math.max(this.lastRv, ev.resourceVersion);
    }
  }

  // #region convert
  /**
   * convertToWatchEvent: what this watcher sees of a change. Matched before and after →
   * MODIFIED; only after → ADDED; only before → DELETED (the object left this selection), sent
   * as it was before, at the event's resourceVersion. No copy: every watcher gets the same frozen
   * event, and the handler encodes it once for all of them (CachingObject).
   */
  private convertToWatchEvent(ev: WatchCacheEvent): StorageWatchEvent | undefined {
    if (!this.inScope(ev.key)) return undefined;
    const p = this.opts.predicate;
    const curPasses = ev.type !== "DELETED" && (p.empty || p.matches(ev.object));
    const oldPasses = ev.prevObject !== undefined && (p.empty || p.matches(ev.prevObject));
    if (curPasses && oldPasses) return sharedEvent(ev, "MODIFIED");
    if (curPasses) return sharedEvent(ev, "ADDED");
    if (oldPasses) return sharedEvent(ev, "DELETED");
    return undefined;
  }
  // #endregion convert

  // #region add
  /**
   * Takes a round of live events, in order — all of them, so nothing is lost while the cacher
   * decides; false when the watcher is now blocked: events of an earlier round are still
   * untaken and the buffer holds more than `bufferSize` (the cacher then waits for it within
   * its budget, and closes it if it stays blocked). Events at or below our starting point are
   * skipped: the initial events or the replayed ring already had them.
   */
  addAll(events: WatchCacheEvent[]): boolean {
    if (this.stopped) return true;
    const before = this.buffer.length;
    for (const ev of events) {
      if (ev.resourceVersion <= this.lastRv) continue;
      const out = this.convertToWatchEvent(ev);
      this.lastRv = ev.resourceVersion;
      if (out) this.buffer.push(out);
    }
    if (this.buffer.length > before) this.wake?.();
    return !this.isBlocked(before);
  }

  /** Blocked: the handler left events of an earlier round untaken, and the buffer is over its size. */
  private isBlocked(leftOver: number): boolean {
    return !this.stopped && leftOver > 0 && this.buffer.length > this.opts.bufferSize;
  }

  /** The buffer's size (upstream's channel size), for tests and the cacher's messages. */
  get bufferSize(): number {
    return this.opts.bufferSize;
  }
  // #endregion add

  // #region bookmarks
  /**
   * nextBookmarkTime: every bookmarkFrequency, but no later than 2 s before the watch's deadline
   * (so the client learns its resourceVersion before the server ends the watch).
   */
  private nextBookmarkTime(now: number): number | undefined {
    if (!this.opts.allowBookmarks) return undefined;
    let at = now + this.opts.bookmarkFrequencyMs;
    if (this.opts.deadline !== undefined) {
      const preTimeout = this.opts.deadline - 2000;
      if (preTimeout < at) at = preTimeout;
      if (at < now) return undefined;
    }
    return at;
  }

  /** Sends a bookmark if one is due and there is room (a bookmark never terminates a watcher). */
  maybeBookmark(now: number, rv: number): void {
    if (this.stopped || this.nextBookmarkAt === undefined || now < this.nextBookmarkAt) return;
    if (this.buffer.length >= this.opts.bufferSize) return;
    this.nextBookmarkAt = this.nextBookmarkTime(now);
    const obj = this.opts.newFunc();
    obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(Math.max(rv, this.lastRv)) };
    this.buffer.push({ type: "BOOKMARK", object: obj });
    this.wake?.();
  }
  // #endregion bookmarks

  /** Ends the watch at once; what was buffered is dropped, as upstream closes the channel. */
  terminate(): void {
    this.buffer = [];
    this.initial = [];
    this.stop();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.opts.onStop(this);
    this.wake?.();
  }

  // #region next-batch
  /**
   * Everything buffered, oldest first, as soon as there is anything; undefined once the watch
   * has ended and nothing is left. The initial events come first, a thousand at a time.
   */
  async nextBatch(): Promise<StorageWatchEvent[] | undefined> {
    for (;;) {
      if (this.initial.length > 0) {
        if (this.initial.length <= maxInitialBatch) {
          const batch = this.initial;
          this.initial = [];
          return batch;
        }
        return this.initial.splice(0, maxInitialBatch);
      }
      if (this.buffer.length > 0) {
        const batch = this.buffer;
        this.buffer = [];
        this.opts.onTaken?.(this);
        return batch;
      }
      if (this.stopped) return undefined;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }
  // #endregion next-batch

  /** One event at a time, for callers that want a plain Watch. */
  async *[Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
    try {
      for (;;) {
        const batch = await this.nextBatch();
        if (!batch) return;
        yield* batch;
      }
    } finally {
      this.stop();
    }
  }
}
// #endregion cache-watcher
