/**
 * WatchCache — one resource's objects held in memory, plus a ring of its most recent changes.
 * Upstream: k8s.io/apiserver/pkg/storage/cacher/watch_cache.go (listed at the end of this header).
 *
 * Solves:
 * - a thousand kubelets each watching pods would be a thousand etcd watches; with the cache
 *   there is one, and each client watch is served from memory;
 * - a client that reconnects with the resourceVersion it last saw must get every change after
 *   it: the ring keeps the last `capacity` events, enough for a short disconnect; a client that
 *   was away longer is told so (410 Gone, reason Expired, "too old resource version") and relists;
 * - `list?resourceVersion=0` ("anything recent is fine" — what informers send first) is answered
 *   from memory without touching etcd.
 *
 * Invariants:
 * - `store` is the state at `resourceVersion`: applying every event in the ring, in order, to
 *   the state at `listResourceVersion` gives `store`;
 * - events in the ring have strictly increasing resourceVersions; the oldest is dropped when a
 *   new one arrives and the ring is full (`startIndex` counts how many were ever dropped);
 * - `resourceVersion` never goes backwards: events and progress bookmarks only raise it.
 *
 * - a busy resource outruns a fixed ring: at 1,000 pod events a second, 100 events are a tenth of
 *   a second of history, and a watch that drops for longer comes back to a 410 and a relist. As
 *   upstream, the ring grows (doubles, up to 100 × 1024) while all it holds is younger than 75 s
 *   (eventFreshDuration) and shrinks (halves, down to 100) when its newest quarter is older —
 *   so it keeps about 75 s of history whatever the rate;
 * - each watcher's buffer is sized from that (suggestedWatchChannelSize): about one second of
 *   history, 10 to 1,000 events by upstream's rule.
 *
 * What upstream does differently: the store is a thread-safe indexer with per-field indexes
 * (pods by node); list may be served from a consistent snapshot.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go (watchCache, watchCacheEvent, processEvent, resizeCacheLocked, doCacheResizeLocked, suggestedWatchChannelSize, getAllEventsSinceLocked, waitUntilFreshAndBlock, Replace, eventFreshDuration, defaultLowerBoundCapacity, defaultUpperBoundCapacity)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { newTooLargeResourceVersionError, tooOldResourceVersion } from "./errors.ts";

/** Upstream's defaultLowerBoundCapacity: the ring's size when history is quiet. */
export const defaultWatchCacheCapacity = 100;
/** Upstream's defaultUpperBoundCapacity: the most the ring grows to. */
export const defaultUpperBoundCapacity = 100 * 1024;
/** How much history the ring tries to keep (upstream's eventFreshDuration: 75 s). */
export const eventFreshDurationMs = 75_000;

// #region channel-size
/** A watcher's buffer bounds (upstream's minWatchChanSize, maxWatchChanSize…). */
export const minWatchChanSize = 10;
/** A watch the index serves by its trigger value (a kubelet's `spec.nodeName=n1`). */
export const maxWatchChanSizeWithIndexAndTrigger = 10;
/** A watch of an indexed resource without a trigger value (an informer of all pods). */
export const maxWatchChanSizeWithIndexWithoutTrigger = 1000;
/** A watch of a resource with no index. */
export const maxWatchChanSizeWithoutIndex = 100;

/**
 * suggestedWatchChannelSize: about one second of history — the ring keeps ~75 s, so its capacity
 * over 75 — at least 10, and at most 10, 1,000 or 100 events as above.
 */
export function suggestedWatchChannelSize(
  capacity: number,
  indexExists: boolean,
  triggerUsed: boolean,
): number {
  const size = Math.max(minWatchChanSize, Math.ceil(capacity / (eventFreshDurationMs / 1000)));
  const max = !indexExists
    ? maxWatchChanSizeWithoutIndex
    : triggerUsed
      ? maxWatchChanSizeWithIndexAndTrigger
      : maxWatchChanSizeWithIndexWithoutTrigger;
  return Math.min(size, max);
}
// #endregion channel-size

export interface WatchCacheOptions {
  /** The ring's smallest size (default 100). */
  lowerBoundCapacity?: number;
  /** The ring's largest size (default 100 × 1024); equal to the lower bound, a fixed ring. */
  upperBoundCapacity?: number;
  /** Wall time in ms, to date each event (injected in tests). */
  now?: () => number;
}

/** How long a read waits for the cache to reach the resourceVersion it asked for (upstream: 3 s). */
export const blockTimeoutMs = 3000;
/** The Retry-After of the Timeout answered when that wait fails (resourceVersionTooHighRetrySeconds). */
export const resourceVersionTooHighRetrySeconds = 1;

// #region watch-cache-event
/** One change, with what the object was before it (so a watcher can tell "left my selector"). */
export interface WatchCacheEvent {
  type: "ADDED" | "MODIFIED" | "DELETED";
  key: string;
  /** The new object; for DELETED, the object as it was, at the deletion's resourceVersion. */
  object: KubeObject;
  /** The object before this change; absent for ADDED. */
  prevObject?: KubeObject;
  resourceVersion: number;
  /** When the cache took it in (ms, the cache's clock): what the ring's resizing looks at. */
  recordTime?: number;
}
// #endregion watch-cache-event

export class WatchCache {
  /** The ring's current size, between the lower and upper bounds. */
  capacity: number;
  private readonly lowerBound: number;
  private readonly upperBound: number;
  private readonly now: () => number;
  private ring: (WatchCacheEvent | undefined)[];
  /** Events ever dropped from the ring; the oldest kept is at startIndex % capacity. */
  private startIndex = 0;
  /** Events ever added; the next goes at endIndex % capacity. */
  private endIndex = 0;
  private readonly store = new Map<string, KubeObject>();
  /** The newest revision the cache is known to be complete up to. */
  resourceVersion = 0;
  /** The revision of the last full list (Replace). */
  private listResourceVersion = 0;
  private waiters: { rv: number; resolve: () => void }[] = [];

  /** A number is a fixed ring of that size; options give the bounds it moves between. */
  constructor(opts: number | WatchCacheOptions = {}) {
    const o = typeof opts === "number" ? { lowerBoundCapacity: opts, upperBoundCapacity: opts } : opts;
    this.lowerBound = Math.max(1, o.lowerBoundCapacity ?? defaultWatchCacheCapacity);
    this.upperBound = Math.max(this.lowerBound, o.upperBoundCapacity ?? defaultUpperBoundCapacity);
    this.now = o.now ?? Date.now;
    this.capacity = this.lowerBound;
    this.ring = new Array(this.capacity);
  }

  // #region replace
  /** Replace: a fresh list. History before it is unknown, so the ring starts empty. */
  replace(items: { key: string; object: KubeObject }[], rv: number): void {
    this.store.clear();
    for (const { key, object } of items) this.store.set(key, object);
    this.ring.fill(undefined);
    this.startIndex = 0;
    this.endIndex = 0;
    this.listResourceVersion = rv;
    this.setResourceVersion(rv);
  }
  // #endregion replace

  // #region process-event
  /** processEvent: apply one change to the store and remember it in the ring. */
  processEvent(type: WatchCacheEvent["type"], key: string, object: KubeObject, rv: number): WatchCacheEvent {
    const prevObject = this.store.get(key);
    const recordTime = this.now();
    const event: WatchCacheEvent = { type, key, object, resourceVersion: rv, recordTime };
    if (prevObject) event.prevObject = prevObject;
    if (type === "DELETED") this.store.delete(key);
    else this.store.set(key, object);
    this.resize(recordTime);
    if (this.endIndex - this.startIndex === this.capacity) {
      // Full: the oldest event is forgotten; a watch from before it can no longer be served.
      this.ring[this.startIndex % this.capacity] = undefined;
      this.startIndex++;
    }
    this.ring[this.endIndex % this.capacity] = event;
    this.endIndex++;
    this.setResourceVersion(rv);
    return event;
  }

  // #region resize
  /**
   * resizeCacheLocked, before an event goes in: a full ring whose oldest event is younger than
   * 75 s doubles (it is losing history a watcher may need); a full ring whose newest quarter
   * began more than 75 s ago halves (it holds more history than anyone needs).
   */
  private resize(now: number): void {
    if (this.endIndex - this.startIndex !== this.capacity) return;
    const oldest = this.ring[this.startIndex % this.capacity] as WatchCacheEvent;
    if (now - (oldest.recordTime ?? now) < eventFreshDurationMs) {
      const bigger = Math.min(this.capacity * 2, this.upperBound);
      if (bigger > this.capacity) this.resizeTo(bigger);
      return;
    }
    const quarter = this.ring[
      (this.endIndex - Math.floor(this.capacity / 4)) % this.capacity
    ] as WatchCacheEvent;
    if (now - (quarter.recordTime ?? now) > eventFreshDurationMs) {
      const smaller = Math.max(Math.floor(this.capacity / 2), this.lowerBound);
      if (smaller < this.capacity) this.resizeTo(smaller);
    }
  }

  /** doCacheResizeLocked: the newest events move to a ring of the new size (the oldest drop if it shrinks). */
  private resizeTo(capacity: number): void {
    const ring = new Array<WatchCacheEvent | undefined>(capacity);
    if (capacity < this.capacity) this.startIndex = this.endIndex - capacity;
    for (let i = this.startIndex; i < this.endIndex; i++) ring[i % capacity] = this.ring[i % this.capacity];
    this.ring = ring;
    this.capacity = capacity;
  }
  // #endregion resize

  /** A progress bookmark from etcd: everything up to `rv` has been seen. */
  setResourceVersion(rv: number): void {
    if (rv <= this.resourceVersion && this.resourceVersion !== 0) return;
    this.resourceVersion = rv;
    const ready = this.waiters.filter((w) => w.rv <= rv);
    this.waiters = this.waiters.filter((w) => w.rv > rv);
    for (const w of ready) w.resolve();
  }
  // #endregion process-event

  // #region events-since
  /**
   * getAllEventsSinceLocked: what a watch from `rv` must be sent first.
   * - rv 0: the whole current state, as ADDED events;
   * - otherwise every event in the ring after rv — if the ring still reaches back that far. The
   *   oldest resourceVersion servable is one less than the oldest event kept (or the last list's,
   *   if nothing was dropped since); older is 410 Gone, reason Expired, `too old resource version: rv (oldest)`.
   */
  getAllEventsSince(rv: number): WatchCacheEvent[] {
    const size = this.endIndex - this.startIndex;
    let oldest: number;
    if (this.listResourceVersion > 0 && this.startIndex === 0) oldest = this.listResourceVersion + 1;
    else if (size > 0)
      oldest = (this.ring[this.startIndex % this.capacity] as WatchCacheEvent).resourceVersion;
    else oldest = this.resourceVersion + 1;

    if (rv === 0) {
      return this.list().map(({ key, object }) => ({
        type: "ADDED",
        key,
        object,
        resourceVersion: this.resourceVersion,
      }));
    }
    if (rv < oldest - 1) throw tooOldResourceVersion(rv, oldest - 1);
    const out: WatchCacheEvent[] = [];
    for (let i = this.startIndex; i < this.endIndex; i++) {
      const ev = this.ring[i % this.capacity] as WatchCacheEvent;
      if (ev.resourceVersion > rv) out.push(ev);
    }
    return out;
  }
  // #endregion events-since

  /** The current objects, sorted by key. */
  list(): { key: string; object: KubeObject }[] {
    return [...this.store.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, object]) => ({ key, object }));
  }

  get(key: string): KubeObject | undefined {
    return this.store.get(key);
  }

  // #region wait-until-fresh
  /**
   * waitUntilFreshAndBlock: a read that asks for "at least rv" waits for the cache to get
   * there; if it does not within 3 s, the answer is 504 "Too large resource version".
   */
  waitUntilFresh(rv: number, timeoutMs = blockTimeoutMs): Promise<void> {
    if (rv <= this.resourceVersion) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = {
        rv,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(newTooLargeResourceVersionError(rv, this.resourceVersion, resourceVersionTooHighRetrySeconds));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
  // #endregion wait-until-fresh
}
