/**
 * Cacher — storage.Interface with a watch cache in front: one etcd watch per resource, fanned
 * out to every client watch, and `resourceVersion=0` reads served from memory.
 *
 * Solves:
 * - etcd load that does not grow with the number of watchers: the cacher lists and watches the
 *   resource once (a reflector of its own) and each client watch is a filter over that stream;
 * - a slow client must not hold up the others: each watcher has a bounded buffer, and a watcher
 *   whose buffer is full when an event arrives is terminated (its watch ends; the client
 *   re-watches from its last resourceVersion) instead of blocking the fan-out;
 * - a client idle on a quiet resource still learns how far the stream has got: watchers that
 *   asked for bookmarks get a BOOKMARK with the cache's resourceVersion every
 *   `bookmarkFrequencyMs`, and 2 s before their deadline, so they can resume from there instead
 *   of from an old revision that compaction may have removed;
 * - fan-out whose cost per event does not grow with the watchers: they all share the cached,
 *   frozen object (no copy each), and its encodings are cached on it (caching-object.ts).
 *
 * Invariants:
 * - a watcher receives events in resourceVersion order, each at most once, and none at or
 *   below the resourceVersion it started from;
 * - every write goes to the underlying storage (etcd), never to the cache: the cache only ever
 *   learns about a write through the etcd watch, so it cannot disagree with etcd for long;
 * - when the cacher has to relist (its etcd watch failed, e.g. compacted), every client watch is
 *   terminated: the new list may have skipped events those watchers would never see.
 *
 * What upstream does differently (v1.32): consistent reads (`resourceVersion=""`) are served
 * from the cache after asking etcd for its current revision; here they go to etcd. A watch
 * without a resourceVersion is served like `resourceVersion=0`. A full watcher buffer gets a
 * short grace period (a dispatch time budget) before the watcher is terminated; here it is
 * terminated at once. Bookmarks are sent every minute upstream; here every 10 s by default.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (Cacher, Watch, GetList, shouldDelegateList, dispatchEvents, startDispatchingBookmarkEventsLocked, terminateAllWatchers, defaultBookmarkFrequency)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go (cacheWatcher: add, nextBookmarkTime, convertToWatchEvent)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/time_budget.go (the grace period we do not model)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { type GroupResource, isStatusError, newNotFound, type StatusError } from "../errors.ts";
import { CachingObject, cachingObjectFor, deepFreeze } from "./caching-object.ts";
import { nameOfKey, tooManyRequests } from "./errors.ts";
import { errorEvent, parseResourceVersion } from "./etcd3-store.ts";
import type {
  GetOptions,
  Interface,
  ListOptions,
  ListResult,
  Preconditions,
  SelectionPredicate,
  StorageWatchEvent,
  UpdateFunc,
  Watch,
  WatchOptions,
} from "./interfaces.ts";
import { everything } from "./selection-predicate.ts";
import {
  blockTimeoutMs,
  defaultWatchCacheCapacity,
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
  /** Events kept for watches that resume (upstream's lower bound: 100). */
  capacity?: number;
  /** Events that may wait unread per watcher before it is terminated. */
  watcherBufferSize?: number;
  /** How often a watcher that asked for bookmarks gets one. */
  bookmarkFrequencyMs?: number;
  /** How often the cacher checks whose bookmark is due (upstream: 1 s, ±25 % jitter). */
  bookmarkTickMs?: number;
  /** How long a read waits for the cache to reach its resourceVersion (upstream: 3 s). */
  blockTimeoutMs?: number;
}

export const defaultWatcherBufferSize = 100;
export const defaultBookmarkFrequencyMs = 10_000;

export class Cacher implements Interface {
  private readonly storage: Interface;
  private readonly prefix: string;
  private readonly gr: GroupResource;
  private readonly keyFunc: (obj: KubeObject) => string;
  private readonly newFunc: () => KubeObject;
  readonly watchCache: WatchCache;
  private readonly watcherBufferSize: number;
  private readonly bookmarkFrequencyMs: number;
  private readonly blockTimeoutMs: number;
  private readonly watchers = new Set<CacheWatcher>();
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
    this.watchCache = new WatchCache(opts.capacity ?? defaultWatchCacheCapacity);
    this.watcherBufferSize = opts.watcherBufferSize ?? defaultWatcherBufferSize;
    this.bookmarkFrequencyMs = opts.bookmarkFrequencyMs ?? defaultBookmarkFrequencyMs;
    this.blockTimeoutMs = opts.blockTimeoutMs ?? blockTimeoutMs;
    this.ready = new Promise((resolve) => {
      this.markReady = () => {
        this.isReady = true;
        resolve();
      };
    });
    const tick = opts.bookmarkTickMs ?? 1000;
    this.bookmarkTimer = setInterval(() => this.dispatchBookmarks(), tick * (0.75 + Math.random() * 0.5));
    this.bookmarkTimer.unref?.();
    void this.run();
  }

  // #region list-and-watch
  /**
   * The cacher's own reflector: list everything, then watch from the list's revision, feeding
   * the watch cache; when the watch ends or fails, terminate the client watches and start over.
   */
  private async run(): Promise<void> {
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
      this.watchCache.setResourceVersion(rv);
      return;
    }
    if (ev.type === "ERROR") return;
    const object = deepFreeze(ev.object);
    const event = this.watchCache.processEvent(ev.type, this.keyFunc(object), object, rv);
    this.dispatchEvent(event);
  }
  // #endregion list-and-watch

  // #region dispatch
  /** Fan-out: offer the event to every watcher; one whose buffer is full is terminated. */
  private dispatchEvent(event: WatchCacheEvent): void {
    for (const w of this.watchers) {
      if (!w.add(event)) {
        // Upstream: "Forcing watcher close due to unresponsiveness". The client re-watches.
        w.terminate();
      }
    }
  }

  /** Every watcher whose bookmark is due gets one with the cache's current resourceVersion. */
  private dispatchBookmarks(): void {
    const rv = this.watchCache.resourceVersion;
    if (rv === 0) return;
    const now = Date.now();
    for (const w of this.watchers) w.maybeBookmark(now, rv);
  }

  private terminateAllWatchers(): void {
    for (const w of [...this.watchers]) w.terminate();
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
      if (isStatusError(e)) return errorWatch(e);
      throw e;
    }
    // No await between taking the initial events and joining `watchers`: no event can slip
    // between the two.
    const startRv = requested === 0 ? this.watchCache.resourceVersion : requested;
    const w = new CacheWatcher({
      key,
      recursive: opts.recursive,
      predicate: opts.predicate,
      startRv,
      bufferSize: this.watcherBufferSize,
      allowBookmarks: !!opts.allowWatchBookmarks,
      bookmarkFrequencyMs: this.bookmarkFrequencyMs,
      deadline: opts.deadline,
      newFunc: this.newFunc,
      onStop: (self) => this.watchers.delete(self),
    });
    w.setInitial(initial);
    this.watchers.add(w);
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
    if (!this.isReady) throw tooManyRequests("storage is (re)initializing", 1);
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

  guaranteedUpdate(
    key: string,
    opts: { preconditions?: Preconditions; ignoreNotFound?: boolean },
    tryUpdate: UpdateFunc,
  ): Promise<KubeObject> {
    return this.storage.guaranteedUpdate(key, opts, tryUpdate);
  }

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

/** Is a key inside what the request named: the key itself, or anything under `<key>/`? */
function scopeTest(key: string, recursive: boolean): (k: string) => boolean {
  if (!recursive) return (k) => k === key;
  const prefix = key.endsWith("/") ? key : `${key}/`;
  return (k) => k.startsWith(prefix);
}

/** newErrWatcher: a watch that sends one ERROR event and ends. */
function errorWatch(err: StatusError): Watch {
  return {
    stop() {},
    async *[Symbol.asyncIterator]() {
      yield errorEvent(err);
    },
  };
}

function shared(type: StorageWatchEvent["type"], c: CachingObject): StorageWatchEvent {
  return { type, object: c.object, cachingObject: c };
}

const deletedObjects = new WeakMap<WatchCacheEvent, CachingObject>();

/**
 * The previous object stamped with the event's resourceVersion (what a watcher whose selector
 * the object left is sent as DELETED) — built once per event, not once per watcher, as upstream's
 * setCachingObjects does. A shallow copy is enough: only metadata.resourceVersion differs, and
 * everything else is frozen and shared with the cached previous object.
 */
function deletedObjectOf(ev: WatchCacheEvent): CachingObject {
  let c = deletedObjects.get(ev);
  if (!c) {
    const prev = ev.prevObject as KubeObject;
    c = new CachingObject({
      ...prev,
      metadata: { ...prev.metadata, resourceVersion: String(ev.resourceVersion) },
    });
    deletedObjects.set(ev, c);
  }
  return c;
}

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
}

/**
 * cacheWatcher: one client watch. The initial events are queued without limit (the client asked
 * for all of them); live events count against `bufferSize`.
 */
export class CacheWatcher implements Watch {
  private readonly initial: StorageWatchEvent[] = [];
  private readonly buffer: StorageWatchEvent[] = [];
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
      const out = this.convert(ev);
      if (out) this.initial.push(out);
    }
  }

  // #region convert
  /**
   * convertToWatchEvent: what this watcher sees of a change. Matched before and after →
   * MODIFIED; only after → ADDED; only before → DELETED (the object left this selection), sent
   * as it was before, at the event's resourceVersion. No copy: every watcher gets the same frozen
   * object, and the handler encodes it once for all of them (CachingObject).
   */
  private convert(ev: WatchCacheEvent): StorageWatchEvent | undefined {
    if (!this.inScope(ev.key)) return undefined;
    const test = (o: KubeObject) => this.opts.predicate.empty || this.opts.predicate.matches(o);
    const curPasses = ev.type !== "DELETED" && test(ev.object);
    const oldPasses = ev.prevObject !== undefined && test(ev.prevObject);
    if (curPasses && oldPasses) return shared("MODIFIED", cachingObjectFor(ev.object));
    if (curPasses) return shared("ADDED", cachingObjectFor(ev.object));
    if (oldPasses) return shared("DELETED", deletedObjectOf(ev));
    return undefined;
  }
  // #endregion convert

  // #region add
  /** Offers a live event; false when the buffer is full (the cacher then terminates us). */
  add(ev: WatchCacheEvent): boolean {
    if (this.stopped) return true;
    if (ev.resourceVersion <= this.lastRv) return true; // already covered by our starting point
    const out = this.convert(ev);
    this.lastRv = ev.resourceVersion;
    if (!out) return true;
    if (this.buffer.length >= this.opts.bufferSize) return false;
    this.buffer.push(out);
    this.wake?.();
    return true;
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
    this.buffer.length = 0;
    this.initial.length = 0;
    this.stop();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.opts.onStop(this);
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
    try {
      for (;;) {
        const ev = this.initial.shift() ?? this.buffer.shift();
        if (ev) {
          yield ev;
          continue;
        }
        if (this.stopped) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
      }
    } finally {
      this.stop();
    }
  }
}
// #endregion cache-watcher
