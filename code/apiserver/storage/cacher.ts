/**
 * Cacher — storage.Interface with a watch cache in front: one etcd watch per resource, fanned
 * out to every client watch, and `resourceVersion=0` reads served from memory. Upstream:
 * k8s.io/apiserver/pkg/storage/cacher/cacher.go. Each client watch is a cacheWatcher
 * (cache-watcher.ts); the objects and the ring of recent events are the WatchCache (watch-cache.ts).
 *
 * Solves:
 * - etcd load that does not grow with the number of watchers: the cacher lists and watches the
 *   resource once (a reflector of its own) and each client watch is a filter over that stream;
 * - writes that do not wait for the fan-out: an event enters the watch cache at once, but goes to
 *   the watchers in later turns of the event loop, at most 50 watchers (or 5 ms) per turn, so a
 *   write's response (and every other request) is not queued behind a thousand watchers;
 * - fan-out that does not offer every event to every watcher: pods are indexed by spec.nodeName,
 *   so a kubelet's watch (`spec.nodeName=<node>`) is offered only its node's pods' events — before
 *   and after the change, so a pod leaving the node still reaches it (indexed-watchers.ts);
 * - fan-out whose cost per event does not grow with the watchers: they all share the cached,
 *   frozen object and one event object built from it (no copy each), and its encodings are
 *   cached on it (caching-object.ts); events that arrive close together go to each watcher as one
 *   batch, which its handler sends in one socket write;
 * - a slow client must not hold up the others: a watcher whose bounded buffer overflows is
 *   blocked; the next rounds wait for it, but only as long as the dispatch time budget allows
 *   (time-budget.ts: 50 ms earned per second, 100 ms at most); still blocked then, it is closed
 *   (its client re-watches from its last resourceVersion) instead of holding the fan-out;
 * - a client that keeps up is never closed: its buffer is sized to about a second of history
 *   (suggestedWatchChannelSize: 10 to 1,000 events, 1,000 for an informer of all pods), the
 *   events of the round in hand never count against it, and a moment's stall is waited for;
 * - a client idle on a quiet resource still learns how far the stream has got: the cacher hands
 *   bookmarks to the watchers that asked for them, at a resourceVersion every watcher has reached.
 *
 * Invariants:
 * - a watcher receives events in resourceVersion order, each at most once, and none at or
 *   below the resourceVersion it started from;
 * - a bookmark's resourceVersion is one every watcher has been handed all events up to
 *   (`dispatchedRv`), never the cache's newer one;
 * - every write goes to the underlying storage (etcd), never to the cache: the cache only ever
 *   learns about a write through the etcd watch, so it cannot disagree with etcd for long;
 * - when the cacher has to relist (its etcd watch failed, e.g. compacted), every client watch is
 *   terminated: the new list may have skipped events those watchers would never see.
 *
 * What upstream does differently (v1.32): a goroutine per watcher and one dispatching goroutine
 * fed by a 100-event `incoming` channel (a full channel blocks the cacher's reflector); here one
 * thread, so the queue is an array handed out in rounds and slices, and a round waits up to
 * `minRoundIntervalMs` to gather events. Upstream's dispatcher blocks on each full channel in
 * turn, the timer shared by all of them; here the round completes, and the next waits until
 * every blocked watcher's handler has taken its events or the budget has run out. The index on
 * spec.nodeName picks, as upstream's, which watchers a change is offered to; a round hands each
 * of them, in one batch, the round's events of its node (indexed-watchers.ts says how it differs).
 * Consistent reads (`resourceVersion=""`) are served from the cache after asking etcd for its
 * current revision; here they go to etcd. Bookmarks are sent every minute upstream; here every
 * 10 s by default.
 *
 * The same as upstream, though it may surprise: a watch without a resourceVersion is served like
 * `resourceVersion=0` (the cache's current objects as ADDED, then changes). Upstream v1.32 does so
 * while the `WatchFromStorageWithoutResourceVersion` gate is off, its default
 * (`getWatchCacheResourceVersion`); with the gate on, such a watch goes to etcd.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (Cacher, startCaching, Watch: triggerValue, getWatchCacheResourceVersion, GetList, shouldDelegateList, processEvent, dispatchEvents, dispatchEvent, startDispatchingBookmarkEventsLocked, terminateAllWatchers, defaultBookmarkFrequency)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/time_budget.go (dispatchTimeoutBudget: the grace for blocked watchers)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go (suggestedWatchChannelSize: the buffer sizes)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { type GroupResource, isStatusError, newNotFound, newTooManyRequests } from "../errors.ts";
import { parseResourceVersion } from "./api-object-versioner.ts";
import { CacheWatcher, scopeTest } from "./cache-watcher.ts";
import { deepFreeze } from "./caching-object.ts";
import { nameOfKey, newErrWatcher } from "./errors.ts";
import { type IndexedTriggerFunc, IndexedWatchers, type RoundTarget } from "./indexed-watchers.ts";
import type {
  GetOptions,
  GuaranteedUpdateOptions,
  Interface,
  ListOptions,
  ListResult,
  Preconditions,
  StorageWatchEvent,
  UpdateFunc,
  Watch,
  WatchOptions,
} from "./interfaces.ts";
import { everything } from "./selection-predicate.ts";
import { type DispatchClock, realDispatchClock, TimeBudget } from "./time-budget.ts";
import {
  blockTimeoutMs,
  suggestedWatchChannelSize,
  WatchCache,
  type WatchCacheEvent,
} from "./watch-cache.ts";

export interface CacherOptions {
  /** The storage the cache sits in front of (an Etcd3Store). */
  storage: Interface;
  /** The resource's key prefix, such as `/registry/pods`. */
  resourcePrefix: string;
  groupResource: GroupResource;
  /** An object's key (default: `<prefix>/<namespace>/<name>`, or `<prefix>/<name>` without a namespace). */
  keyFunc?: (obj: KubeObject) => string;
  /** An empty object of the kind, for BOOKMARK events. */
  newFunc?: () => KubeObject;
  /**
   * A fixed number of events kept for watches that resume. Unset, the ring keeps about 75 s of
   * history, between 100 and 100 × 1024 events, as upstream's.
   */
  capacity?: number;
  /**
   * A fixed number of events that may wait for a watcher whose client is not reading. Unset,
   * each watcher's is upstream's suggestedWatchChannelSize (about a second of history).
   */
  watcherBufferSize?: number;
  /**
   * The field this resource is indexed by and how to read it (pods: `spec.nodeName`, from the
   * registry). A watch whose field selector requires one value of it is offered only the events
   * of that value; it also sets the buffer sizes — such a watch gets at most 10, any other at
   * most 1,000; a resource without an index, at most 100.
   */
  indexedTrigger?: IndexedTriggerFunc;
  /**
   * False: every watcher is offered every event, as if there were no index (the buffer sizes
   * stay the index's) — the reference run of the watch-index benchmark. Default true.
   */
  dispatchByIndex?: boolean;
  /** Monotonic time and timers for the dispatch budget and the ring's dating (tests inject one). */
  clock?: DispatchClock;
  /** How often a watcher that asked for bookmarks gets one. */
  bookmarkFrequencyMs?: number;
  /** How often the cacher checks whose bookmark is due (upstream: 1 s, ±25 % jitter). */
  bookmarkTickMs?: number;
  /** How long a read waits for the cache to reach its resourceVersion (upstream: 3 s). */
  blockTimeoutMs?: number;
  /** How long one turn of the event loop may spend handing events to watchers. */
  dispatchSliceMs?: number;
  /** How many watchers one turn of the event loop may hand events to. */
  dispatchSliceWatchers?: number;
  /** The shortest time between two dispatch rounds (how long an event may wait for company). */
  minRoundIntervalMs?: number;
}

export const defaultBookmarkFrequencyMs = 10_000;
export const defaultDispatchSliceMs = 5;
export const defaultDispatchSliceWatchers = 50;
export const defaultMinRoundIntervalMs = 50;

/**
 * Counters over every cacher of this process (upstream's apiserver_terminated_watchers_total,
 * summed over resources): benchmarks read them to prove no keeping-up watch was closed.
 */
export const cacherMetrics = { terminatedWatchers: 0 };

export class Cacher implements Interface {
  private readonly storage: Interface;
  private readonly prefix: string;
  private readonly gr: GroupResource;
  private readonly keyFunc: (obj: KubeObject) => string;
  private readonly newFunc: () => KubeObject;
  readonly watchCache: WatchCache;
  private readonly watcherBufferSize?: number;
  private readonly indexedTrigger?: IndexedTriggerFunc;
  private readonly dispatchByIndex: boolean;
  private readonly clock: DispatchClock;
  /** How long blocked watchers may be waited for (upstream's dispatchTimeoutBudget). */
  private readonly budget: TimeBudget;
  /** Watchers whose buffer overflowed in the last round, not yet unblocked or closed. */
  private readonly blocked = new Set<CacheWatcher>();
  /** Set while the next round waits for the blocked watchers. */
  private waiting?: { startedAt: number; timeoutMs: number; timer: { stop(): void } };
  private readonly bookmarkFrequencyMs: number;
  private readonly blockTimeoutMs: number;
  /** Every client watch, by the value of the index it asked for (upstream's `watchers`). */
  private readonly watchers: IndexedWatchers;
  /** Events in the watch cache not yet handed to the watchers (upstream's `incoming` channel). */
  private incoming: WatchCacheEvent[] = [];
  /** The round being dispatched: its events, its watchers (each with its events), the next one's index. */
  private round?: { events: WatchCacheEvent[]; targets: RoundTarget[]; next: number };
  private dispatchScheduled = false;
  private readonly dispatchSliceMs: number;
  private readonly dispatchSliceWatchers: number;
  private readonly minRoundIntervalMs: number;
  private lastRoundAt = Number.NEGATIVE_INFINITY;
  /** Every watcher has been handed every event up to here (what a bookmark may claim). */
  private dispatchedRv = 0;
  /** The newest progress notification from etcd. */
  private progressRv = 0;
  /** Watchers closed because their buffer was full (upstream's terminated-watchers metric). */
  terminatedWatchers = 0;
  private readonly ready: Promise<void>;
  private markReady!: () => void;
  private isReady = false;
  private stopped = false;
  private upstream?: Watch;
  private readonly bookmarkTimer: ReturnType<typeof setInterval>;

  constructor(opts: CacherOptions) {
    this.storage = opts.storage;
    this.prefix = opts.resourcePrefix.replace(/\/+$/, "");
    this.gr = opts.groupResource;
    this.keyFunc =
      opts.keyFunc ??
      ((o) =>
        o.metadata.namespace
          ? `${this.prefix}/${o.metadata.namespace}/${o.metadata.name}`
          : `${this.prefix}/${o.metadata.name}`);
    this.newFunc = opts.newFunc ?? (() => ({ metadata: {} }));
    this.clock = opts.clock ?? realDispatchClock;
    this.budget = new TimeBudget(() => this.clock.now());
    this.watchCache = new WatchCache(opts.capacity ?? { now: () => this.clock.now() });
    this.watcherBufferSize = opts.watcherBufferSize;
    this.indexedTrigger = opts.indexedTrigger;
    this.dispatchByIndex = opts.dispatchByIndex ?? true;
    this.watchers = new IndexedWatchers(this.indexedTrigger);
    this.bookmarkFrequencyMs = opts.bookmarkFrequencyMs ?? defaultBookmarkFrequencyMs;
    this.blockTimeoutMs = opts.blockTimeoutMs ?? blockTimeoutMs;
    this.dispatchSliceMs = opts.dispatchSliceMs ?? defaultDispatchSliceMs;
    this.dispatchSliceWatchers = opts.dispatchSliceWatchers ?? defaultDispatchSliceWatchers;
    this.minRoundIntervalMs = opts.minRoundIntervalMs ?? defaultMinRoundIntervalMs;
    this.ready = new Promise((resolve) => {
      this.markReady = () => {
        this.isReady = true;
        resolve();
      };
    });
    const tick = opts.bookmarkTickMs ?? 1000;
    this.bookmarkTimer = setInterval(() => this.dispatchBookmarks(), tick * (0.75 + Math.random() * 0.5));
    this.bookmarkTimer.unref?.();
    void this.startCaching();
  }

  // #region list-and-watch
  /**
   * startCaching: the cacher's own reflector — list everything, then watch from the list's
   * revision, feeding the watch cache; when the watch ends or fails, terminate the client watches
   * and start over.
   */
  private async startCaching(): Promise<void> {
    let backoffMs = 100;
    while (!this.stopped) {
      try {
        const list = await this.storage.getList(this.prefix, { predicate: everything, recursive: true });
        if (this.stopped) return;
        this.terminateAllWatchers();
        // Cached objects are shared by every watcher from now on: frozen, never copied for them.
        this.watchCache.replace(
          list.items.map((object) => ({ key: this.keyFunc(object), object: deepFreeze(object) })),
          Number(list.resourceVersion),
        );
        this.dispatchedRv = this.progressRv = Number(list.resourceVersion);
        this.markReady();
        this.upstream = await this.storage.watch(this.prefix, {
          resourceVersion: list.resourceVersion,
          predicate: everything,
          recursive: true,
          allowWatchBookmarks: true,
        });
        if (this.stopped) {
          this.upstream.stop();
          return;
        }
        backoffMs = 100;
        for await (const ev of this.upstream) {
          if (ev.type === "ERROR") break; // compacted or failed: relist
          this.processEvent(ev);
        }
      } catch {
        // etcd unreachable: try again below, a little later each time
      }
      if (this.stopped) return;
      await new Promise((r) => setTimeout(r, backoffMs));
      backoffMs = Math.min(backoffMs * 2, 5000);
    }
  }

  private processEvent(ev: StorageWatchEvent): void {
    const rv = Number(ev.object.metadata.resourceVersion);
    if (ev.type === "BOOKMARK") {
      // etcd's progress notification: nothing changed up to rv. Watchers may be told so once
      // the events queued before it have reached them.
      this.watchCache.setResourceVersion(rv);
      this.progressRv = rv;
      if (!this.round && this.incoming.length === 0) this.dispatchedRv = Math.max(this.dispatchedRv, rv);
      return;
    }
    if (ev.type === "ERROR") return;
    const object = deepFreeze(ev.object);
    // The cache (lists, waitUntilFresh) is current as soon as the event arrives; only the
    // fan-out to the watchers is deferred.
    const event = this.watchCache.processEvent(ev.type, this.keyFunc(object), object, rv);
    this.enqueue(event);
  }
  // #endregion list-and-watch

  // #region dispatch
  /**
   * Queue the event for the watchers and return at once: the fan-out runs in later turns of the
   * event loop (dispatchSlice), so whatever is waiting for this turn to end — the write's own
   * response among it — does not wait for a thousand watchers to be served.
   */
  private enqueue(event: WatchCacheEvent): void {
    this.incoming.push(event);
    this.scheduleDispatch();
  }

  /**
   * The next slice runs after the I/O that is waiting. A new round starts at most every
   * `minRoundIntervalMs`: when events come faster than that, each round (and each watcher's
   * write) carries several of them instead of one — as Nagle's algorithm does for a socket —
   * which costs each event at most that long; a quiet resource's events go out at once.
   */
  private scheduleDispatch(): void {
    if (this.dispatchScheduled || this.stopped || this.waiting) return;
    this.dispatchScheduled = true;
    const run = () => {
      this.dispatchScheduled = false;
      this.dispatchSlice();
    };
    const wait = this.round ? 0 : this.lastRoundAt + this.minRoundIntervalMs - performance.now();
    if (wait > 0) setTimeout(run, wait);
    else setImmediate(run);
  }

  /**
   * dispatchEvents, one slice at a time: a round hands the events queued so far to the watchers
   * the index picks (startDispatching), each the ones it may match, in one batch (its handler
   * writes them together); after `dispatchSliceMs` or `dispatchSliceWatchers` watchers the slice
   * stops, even in the middle of a round, and the next one is scheduled behind the I/O that
   * arrived meanwhile. A watcher never gets a round before
   * the previous one, so each still sees the events in resourceVersion order.
   */
  private dispatchSlice(): void {
    const until = performance.now() + this.dispatchSliceMs;
    for (;;) {
      if (!this.round) {
        if (this.incoming.length === 0) {
          this.dispatchedRv = Math.max(this.dispatchedRv, this.progressRv);
          return;
        }
        const now = performance.now();
        if (now < this.lastRoundAt + this.minRoundIntervalMs) {
          this.scheduleDispatch();
          return;
        }
        this.lastRoundAt = now;
        // Watchers that join after this snapshot already have these events: the ring or the
        // state they started from includes them, and addAll() skips what they have.
        this.round = { events: this.incoming, targets: this.watchers.forRound(this.incoming), next: 0 };
        this.incoming = [];
      }
      const round = this.round;
      // Each watcher served here also costs, right after this slice, its handler's turn to
      // encode and write: so a slice serves at most `dispatchSliceWatchers` of them, as well as
      // stopping after `dispatchSliceMs`.
      const last = Math.min(round.targets.length, round.next + this.dispatchSliceWatchers);
      while (round.next < last) {
        const { watcher, events } = round.targets[round.next++];
        if (!watcher.addAll(events)) this.blocked.add(watcher);
        if (performance.now() >= until) break;
      }
      if (round.next < round.targets.length) {
        this.scheduleDispatch();
        return;
      }
      this.dispatchedRv = round.events[round.events.length - 1].resourceVersion;
      this.round = undefined;
      if (this.blocked.size > 0) {
        this.waitForBlocked();
        return;
      }
    }
  }

  // #region budget
  /**
   * Some watchers' buffers overflowed: the next round waits for their handlers to take their
   * events, for as long as the budget holds (upstream blocks on each full channel until a
   * timer set to `takeAvailable()` fires). With nothing in the budget they are closed at once.
   */
  private waitForBlocked(): void {
    const timeoutMs = this.budget.takeAvailable();
    if (timeoutMs <= 0) {
      this.closeBlocked();
      return;
    }
    const startedAt = this.clock.now();
    this.waiting = {
      startedAt,
      timeoutMs,
      timer: this.clock.afterFunc(timeoutMs, () => this.closeBlocked()),
    };
  }

  /** A watcher's handler took its events, or it stopped: no longer blocked. */
  private unblock(w: CacheWatcher): void {
    if (!this.blocked.delete(w) || this.blocked.size > 0 || !this.waiting) return;
    // Every blocked watcher drained in time: what the wait did not use goes back.
    const { startedAt, timeoutMs, timer } = this.waiting;
    timer.stop();
    this.budget.returnUnused(timeoutMs - (this.clock.now() - startedAt));
    this.waiting = undefined;
    this.scheduleDispatch();
  }

  /** The budget ran out: every watcher still blocked is closed, and the rounds go on. */
  private closeBlocked(): void {
    this.waiting?.timer.stop();
    this.waiting = undefined;
    const still = [...this.blocked];
    this.blocked.clear();
    for (const w of still) this.forceClose(w);
    this.scheduleDispatch();
  }
  // #endregion budget

  /**
   * A watcher whose buffer is full: its client is not reading. Upstream logs "Forcing watcher
   * close due to unresponsiveness" and counts it (apiserver_terminated_watchers_total); the
   * client's reflector then watches again from the last resourceVersion it saw.
   */
  private forceClose(w: CacheWatcher): void {
    this.terminatedWatchers++;
    cacherMetrics.terminatedWatchers++;
    w.terminate();
  }

  /**
   * Every watcher whose bookmark is due gets one. Its resourceVersion is the last one dispatched,
   * not the cache's: a bookmark says "you have every event up to here", which is false for
   * events still queued.
   */
  private dispatchBookmarks(): void {
    const rv = this.dispatchedRv;
    if (rv === 0) return;
    const now = Date.now();
    for (const w of this.watchers.all()) w.maybeBookmark(now, rv);
  }

  private terminateAllWatchers(): void {
    this.incoming = [];
    this.round = undefined;
    this.waiting?.timer.stop();
    this.waiting = undefined;
    this.blocked.clear();
    this.watchers.terminateAll();
  }
  // #endregion dispatch

  // #region watch
  /**
   * A client watch, served from the cache: rv "0" (or unset) starts with the current state as
   * ADDED events; rv N replays the ring after N (410 if the ring no longer reaches back there)
   * and then follows live events.
   */
  async watch(key: string, opts: WatchOptions): Promise<Watch> {
    const requested = parseResourceVersion(opts.resourceVersion);
    await this.waitReadyOrRefuse();
    let initial: WatchCacheEvent[];
    try {
      initial = this.watchCache.getAllEventsSince(requested);
    } catch (e) {
      if (isStatusError(e)) return newErrWatcher(e);
      throw e;
    }
    // No await between taking the initial events and joining `watchers`: no event can slip
    // between the two.
    const startRv = requested === 0 ? this.watchCache.resourceVersion : requested;
    // The value this watch is filed under: the one its field selector requires of the indexed
    // field (RequiresExactMatch); `spec.nodeName!=x`, a label selector or none: no value.
    const triggerValue = this.indexedTrigger && opts.predicate.matcherValue?.(this.indexedTrigger.indexName);
    // Upstream's rule, from the ring's size when the watch starts.
    const bufferSize =
      this.watcherBufferSize ??
      suggestedWatchChannelSize(
        this.watchCache.capacity,
        this.indexedTrigger !== undefined,
        triggerValue !== undefined,
      );
    const filedUnder = this.dispatchByIndex ? triggerValue : undefined;
    const w = new CacheWatcher({
      key,
      recursive: opts.recursive,
      predicate: opts.predicate,
      startRv,
      bufferSize,
      allowBookmarks: !!opts.allowWatchBookmarks,
      bookmarkFrequencyMs: this.bookmarkFrequencyMs,
      deadline: opts.deadline,
      newFunc: this.newFunc,
      onStop: (self) => {
        this.watchers.deleteWatcher(self, filedUnder);
        this.unblock(self);
      },
      onTaken: (self) => this.unblock(self),
    });
    w.setInitial(initial);
    this.watchers.addWatcher(w, filedUnder);
    return w;
  }
  // #endregion watch

  /**
   * A watch can only be served from a filled cache: wait for it a little, then answer 429 so
   * the client retries (upstream: "storage is (re)initializing").
   */
  private async waitReadyOrRefuse(): Promise<void> {
    if (this.isReady) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.ready, new Promise((r) => (timer = setTimeout(r, this.blockTimeoutMs)))]);
    clearTimeout(timer);
    if (!this.isReady) throw newTooManyRequests("storage is (re)initializing", 1);
  }

  // #region get-list
  /**
   * shouldDelegateList: etcd answers what the cache cannot — a consistent read (rv ""), an exact
   * revision, a continuation, or a page with a resourceVersion other than "0". Everything else
   * is served from memory once the cache has reached the resourceVersion asked for.
   */
  async getList(key: string, opts: ListOptions): Promise<ListResult> {
    const rv = opts.resourceVersion ?? "";
    const delegate =
      rv === "" ||
      !!opts.continue ||
      ((opts.limit ?? 0) > 0 && rv !== "0") ||
      opts.resourceVersionMatch === "Exact";
    // Until the first list has filled the cache, etcd answers (ResilientWatchCacheInitialization).
    if (delegate || !this.isReady) return this.storage.getList(key, opts);

    const minimum = parseResourceVersion(rv);
    await this.watchCache.waitUntilFresh(minimum, this.blockTimeoutMs);
    const inScope = scopeTest(key, opts.recursive);
    const items = this.watchCache
      .list()
      .filter(({ key: k, object }) => inScope(k) && (opts.predicate.empty || opts.predicate.matches(object)))
      .map(({ object }) => structuredClone(object));
    return { items, resourceVersion: String(this.watchCache.resourceVersion) };
  }

  async get(key: string, opts: GetOptions = {}): Promise<KubeObject | undefined> {
    if (!opts.resourceVersion || !this.isReady) return this.storage.get(key, opts);
    const minimum = parseResourceVersion(opts.resourceVersion);
    await this.watchCache.waitUntilFresh(minimum, this.blockTimeoutMs);
    const obj = this.watchCache.get(key);
    if (obj) return structuredClone(obj);
    if (opts.ignoreNotFound) return undefined;
    throw newNotFound(this.gr, nameOfKey(key));
  }
  // #endregion get-list

  // Writes go straight to etcd; the cache hears of them through its watch.
  create(key: string, obj: KubeObject): Promise<KubeObject> {
    return this.storage.create(key, obj);
  }

  delete(
    key: string,
    preconditions?: Preconditions,
    validateDeletion?: (current: KubeObject) => void | Promise<void>,
  ): Promise<KubeObject> {
    return this.storage.delete(key, preconditions, validateDeletion);
  }

  // #region guaranteed-update
  /**
   * Cacher.GuaranteedUpdate: the cached object goes down as the first guess, so an update of an
   * object the cache has (a binding, a status write) skips etcd's read. The store never changes
   * it (it is frozen and shared) and copies it before tryUpdate.
   */
  guaranteedUpdate(key: string, opts: GuaranteedUpdateOptions, tryUpdate: UpdateFunc): Promise<KubeObject> {
    const cached = this.isReady ? this.watchCache.get(key) : undefined;
    return this.storage.guaranteedUpdate(
      key,
      cached ? { ...opts, cachedExistingObject: cached } : opts,
      tryUpdate,
    );
  }
  // #endregion guaranteed-update

  currentResourceVersion(): Promise<string> {
    return this.storage.currentResourceVersion();
  }

  /** The number of client watches being served (for tests and metrics). */
  watcherCount(): number {
    return this.watchers.size;
  }

  /** Resolves once the first list has filled the cache. */
  waitReady(): Promise<void> {
    return this.ready;
  }

  async close(): Promise<void> {
    this.stopped = true;
    clearInterval(this.bookmarkTimer);
    this.upstream?.stop();
    this.terminateAllWatchers();
  }
}
