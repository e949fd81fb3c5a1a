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
 * What upstream does differently: the ring grows and shrinks between 100 and 100 × 1024 entries
 * to keep about 75 s of history (eventFreshDuration); the store is a thread-safe indexer with
 * per-field indexes (pods by node); list may be served from a consistent snapshot.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go (watchCache, watchCacheEvent, processEvent, getAllEventsSinceLocked, waitUntilFreshAndBlock, Replace, defaultLowerBoundCapacity)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { newTooLargeResourceVersionError, tooOldResourceVersion } from "./errors.ts";

/** Upstream's defaultLowerBoundCapacity: the ring's size when history is quiet. */
export const defaultWatchCacheCapacity = 100;

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
}
// #endregion watch-cache-event

export class WatchCache {
  readonly capacity: number;
  private readonly ring: (WatchCacheEvent | undefined)[];
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

  constructor(capacity = defaultWatchCacheCapacity) {
    this.capacity = Math.max(1, capacity);
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
    const event: WatchCacheEvent = { type, key, object, resourceVersion: rv };
    if (prevObject) event.prevObject = prevObject;
    if (type === "DELETED") this.store.delete(key);
    else this.store.set(key, object);
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
