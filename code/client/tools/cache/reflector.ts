/**
 * Reflector — keeps a store equal to the server: list, then watch from the list's
 * resourceVersion, writing every event into the store; resume the watch where it broke; list
 * again only when the server says the position is gone.
 * Mirrors kubernetes/client-go tools/cache/reflector.go (Reflector, NewReflectorWithOptions, Run,
 * ListAndWatch, list, watch, handleWatch, relistResourceVersion, isExpiredError, minWatchTimeout).
 *
 * Solves:
 * - a controller must see every change, and survive connections that drop, servers that restart
 *   and histories that get compacted, without losing an object or keeping a ghost;
 * - a relist is expensive (the whole collection), so a dropped watch resumes from the last
 *   resourceVersion seen — bookmarks move that position forward even when nothing changes —
 *   and only a 410 (Expired / Gone) forces a relist;
 * - a failing server must not be hammered: every restart of list-and-watch waits a backoff.
 *
 * Invariants:
 * - `lastSyncResourceVersion` is the list's resourceVersion or the last event's, never older;
 * - the store sees a Replace for every successful list and, between two lists, the watch events
 *   in the order the server sent them;
 * - each watch asks for bookmarks and a random timeout in [minWatchTimeout, 2 × minWatchTimeout),
 *   so a fleet's watches do not all end at once.
 *
 * What upstream does differently: WatchList streaming (`sendInitialEvents`) is not built; the
 * list is always a paginated list. Internal-error watch retries (MaxInternalErrorRetryDuration,
 * off by default upstream) are not built.
 *
 * @upstream kubernetes/client-go tools/cache/reflector.go (Reflector, NewReflectorWithOptions, Run, ListAndWatch, list, watch, handleAnyWatch, relistResourceVersion, isExpiredError, isWatchErrorRetriable, defaultMinWatchTimeout)
 * @chapter 04-informers
 */

import type { KubeObject, Status, WatchEvent } from "../../../api/meta.ts";
import { isGone, isResourceExpired, isTooManyRequests, StatusError } from "../../errors.ts";
import { type Clock, realClock, sleep } from "../../util/clock.ts";
import { type BackoffManager, reflectorBackoff } from "../../util/wait/backoff.ts";
import { ListPager } from "../pager/pager.ts";
import type { ListerWatcher, Watch } from "./listwatch.ts";
import type { Store } from "./store.ts";

/** The writes a reflector makes: the DeltaFIFO in an informer, or any Store. */
export type ReflectorStore<T> = Pick<Store<T>, "add" | "update" | "delete" | "replace" | "resync">;

export interface ReflectorOptions {
  /** For messages. */
  name?: string;
  /** How often to call `store.resync()` (0: never). */
  resyncPeriodMs?: number;
  /** Asked at each resync tick; a resync happens only if it says yes (the informer's shouldResync). */
  shouldResync?: () => boolean;
  clock?: Clock;
  /** For the watch timeout and the backoff jitter; seed it in tests. */
  random?: () => number;
  /** Defaults to 5 minutes (defaultMinWatchTimeout). */
  minWatchTimeoutMs?: number;
  /** Page size of the list; 0 lets the reflector choose (WatchListPageSize). */
  watchListPageSize?: number;
  backoff?: BackoffManager;
  /** Called with the error that ended a list-and-watch (DefaultWatchErrorHandler logs it). */
  watchErrorHandler?: (err: unknown) => void;
}

const defaultMinWatchTimeoutMs = 5 * 60 * 1000;

/** Ended because the caller asked (errorStopRequested). */
const stopRequested = Symbol("stop requested");

// #region expired
/** 410 with reason Expired or Gone: the resourceVersion asked for is no longer served. */
export function isExpiredError(err: unknown): boolean {
  return isResourceExpired(err) || isGone(err);
}
// #endregion expired

/** Resolves to the promise's value, or to `stopRequested` as soon as `signal` aborts. */
function untilAborted<V>(p: Promise<V>, signal: AbortSignal): Promise<V | typeof stopRequested> {
  if (signal.aborted) return Promise.resolve(stopRequested);
  let onAbort: () => void = () => {};
  const aborted = new Promise<typeof stopRequested>((resolve) => {
    onAbort = () => resolve(stopRequested);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([p, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/** A watch call that failed before it started and is worth retrying after a backoff. */
function isWatchErrorRetriable(err: unknown): boolean {
  // Code 0: no answer at all (connection refused or reset) — newStatusError's convention.
  return isTooManyRequests(err) || (err instanceof StatusError && err.code === 0);
}

export class Reflector<T extends KubeObject = KubeObject> {
  readonly name: string;
  private lastSyncRV = "";
  // Set when a list at lastSyncRV answered 410: the next list must be a fresh one ("").
  private isLastSyncResourceVersionUnavailable = false;
  // Whether the server paginated a list at resourceVersion "0" (so it is not a watch cache).
  private paginatedResult = false;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly backoff: BackoffManager;
  private readonly minWatchTimeoutMs: number;
  /** The error that ended the last list-and-watch, if any. */
  lastError: unknown;

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly store: ReflectorStore<T>,
    private readonly opts: ReflectorOptions = {},
  ) {
    this.name = opts.name ?? "reflector";
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.backoff = opts.backoff ?? reflectorBackoff(this.clock, this.random);
    this.minWatchTimeoutMs = opts.minWatchTimeoutMs ?? defaultMinWatchTimeoutMs;
  }

  lastSyncResourceVersion(): string {
    return this.lastSyncRV;
  }

  // #region run
  /** listAndWatch until `signal` aborts, waiting a backoff before each restart (wait.BackoffUntil). */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.listAndWatch(signal);
      } catch (err) {
        this.lastError = err;
        this.opts.watchErrorHandler?.(err);
      }
      if (signal.aborted) break;
      // Sliding: the delay is computed after the attempt, so a long healthy watch resets it.
      await sleep(this.clock, this.backoff.next(), signal);
    }
  }
  // #endregion run

  // #region list-and-watch
  /** One list, then watches until one ends in a way that needs a relist (or `signal` aborts). */
  async listAndWatch(signal: AbortSignal): Promise<void> {
    await this.list(signal);
    if (signal.aborted) return;
    // Resync runs beside the watch: a timer asks shouldResync and pokes the store.
    let resyncTimer: { stop(): boolean } | undefined;
    const period = this.opts.resyncPeriodMs ?? 0;
    const arm = () => {
      if (period <= 0) return;
      resyncTimer = this.clock.afterFunc(period, () => {
        if (this.opts.shouldResync?.() ?? true) this.store.resync();
        arm();
      });
    };
    arm();
    try {
      await this.watch(signal);
    } finally {
      resyncTimer?.stop();
    }
  }
  // #endregion list-and-watch

  /** Where to list from: "0" first (any cached state will do), the last RV after, "" after a 410. */
  private relistResourceVersion(): string {
    if (this.isLastSyncResourceVersionUnavailable) return "";
    if (this.lastSyncRV === "") return "0";
    return this.lastSyncRV;
  }

  // #region list
  private async list(signal: AbortSignal): Promise<void> {
    const resourceVersion = this.relistResourceVersion();
    const pager = new ListPager<T>((o) => this.lw.list(o));
    if (this.opts.watchListPageSize) pager.pageSize = this.opts.watchListPageSize;
    else if (this.paginatedResult) {
      // The server paginated before: keep the default page size.
    } else if (resourceVersion !== "" && resourceVersion !== "0") {
      // A list at a specific resourceVersion is served from the watch cache, which ignores
      // limits anyway; asking for pages would only force it to etcd.
      pager.pageSize = 0;
    }
    // A list can take long (or hang on a dead server); a stop must not wait for it.
    const listing = pager.list({ resourceVersion }).catch((err) => {
      if (!isExpiredError(err)) throw err;
      // Our resourceVersion is too old to list at: list the newest state instead.
      this.isLastSyncResourceVersionUnavailable = true;
      return pager.list({ resourceVersion: this.relistResourceVersion() });
    });
    listing.catch(() => {}); // an abandoned list's failure is nobody's business
    const result = await untilAborted(listing, signal);
    if (result === stopRequested || signal.aborted) return;
    if (resourceVersion === "0" && result.paginated) this.paginatedResult = true;
    this.isLastSyncResourceVersionUnavailable = false;
    const rv = result.list.metadata.resourceVersion ?? "";
    this.store.replace(result.list.items, rv);
    this.lastSyncRV = rv;
  }
  // #endregion list

  // #region watch
  /** Watches from lastSyncRV, again and again; returns when a relist is needed. */
  private async watch(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (signal.aborted) return;
      const start = this.clock.now();
      const timeoutSeconds = Math.floor((this.minWatchTimeoutMs / 1000) * (this.random() + 1));
      let w: Watch<T>;
      try {
        const opening = this.lw.watch({
          resourceVersion: this.lastSyncRV,
          timeoutSeconds,
          allowWatchBookmarks: true,
        });
        const opened = await untilAborted(opening, signal);
        if (opened === stopRequested) {
          // Close it if it opens after all.
          opening.then((late) => late.stop()).catch(() => {});
          return;
        }
        w = opened;
      } catch (err) {
        if (isWatchErrorRetriable(err)) {
          await sleep(this.clock, this.backoff.next(), signal);
          continue;
        }
        // 410 here (or anything else) ends this listAndWatch: run() relists after a backoff.
        throw err;
      }
      const err = await this.handleWatch(start, w, signal);
      w.stop();
      if (err === undefined) continue; // a clean end (timeout, dropped connection): resume
      if (err === stopRequested) return;
      if (isTooManyRequests(err)) {
        await sleep(this.clock, this.backoff.next(), signal);
        continue;
      }
      // Expired / Gone, a very short watch, anything else: relist.
      this.lastError = err;
      return;
    }
  }

  /** Feeds one watch's events to the store; returns why it ended (undefined: it just ended). */
  private async handleWatch(start: number, w: Watch<T>, signal: AbortSignal): Promise<unknown> {
    let eventCount = 0;
    const it = w[Symbol.asyncIterator]();
    let onAbort: () => void = () => {};
    const aborted = new Promise<typeof stopRequested>((resolve) => {
      onAbort = () => resolve(stopRequested);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      for (;;) {
        if (signal.aborted) return stopRequested;
        let next: IteratorResult<WatchEvent<T>> | typeof stopRequested;
        try {
          next = await Promise.race([it.next(), aborted]);
        } catch (err) {
          // A Status thrown by the stream is the server's answer; a broken stream is a drop.
          if (err instanceof StatusError) return err;
          break;
        }
        if (next === stopRequested) return stopRequested;
        if (next.done) break;
        const ev = next.value;
        if (ev.type === "ERROR") return new StatusError(ev.object as Status);
        const obj = ev.object as T;
        switch (ev.type) {
          case "ADDED":
            this.store.add(obj);
            break;
          case "MODIFIED":
            this.store.update(obj);
            break;
          case "DELETED":
            this.store.delete(obj);
            break;
          case "BOOKMARK":
            // Nothing to store: only the resourceVersion moves forward.
            break;
        }
        const rv = obj.metadata?.resourceVersion;
        if (rv) this.lastSyncRV = rv;
        eventCount++;
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    // A watch that closes at once with nothing in it means something is wrong (a proxy that
    // cuts streams, a server refusing): relist rather than spin on re-watches.
    if (this.clock.now() - start < 1000 && eventCount === 0) {
      return new Error(
        `very short watch: ${this.name}: Unexpected watch close - watch lasted less than a second and no items received`,
      );
    }
    return undefined;
  }
  // #endregion watch
}
