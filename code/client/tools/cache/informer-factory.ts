/**
 * SharedInformerFactory — one informer per resource for a whole process: every controller that
 * asks for pods gets the same SharedIndexInformer, hence one watch and one cache.
 * Mirrors kubernetes/client-go informers/factory.go (SharedInformerFactory, NewSharedInformerFactoryWithOptions,
 * WithNamespace, WithTweakListOptions, WithCustomResyncConfig, WithTransform, InformerFor, Start,
 * WaitForCacheSync, Shutdown) and tools/cache/shared_informer.go (WaitForCacheSync).
 *
 * Solves:
 * - the controller-manager runs thirty controllers; without sharing, each would watch pods on
 *   its own and the API server would serve thirty identical streams;
 * - the factory must not know how to reach a server: it takes a function that makes a
 *   ListerWatcher for a resource (the REST client's newListWatchFromClient, or a fake source).
 *
 * Invariants:
 * - `informerFor(r)` returns the same informer for the same resource for the factory's lifetime;
 *   the factory's namespace and list tweak apply to all of them (a different namespace is a
 *   different factory, as upstream);
 * - `start` starts only informers not started yet, so calling it again after asking for more
 *   informers is safe; after `shutdown` it starts nothing.
 *
 * @upstream kubernetes/client-go informers/factory.go (SharedInformerFactory, sharedInformerFactory, InformerFor, Start, WaitForCacheSync, Shutdown)
 * @upstream kubernetes/client-go tools/cache/shared_informer.go (WaitForCacheSync)
 * @chapter 04-informers
 */

import type { KubeObject } from "../../../api/meta.ts";
import type { GroupVersionResource } from "../../../api/schema.ts";
import { type Clock, realClock, sleep } from "../../util/clock.ts";
import { Lister } from "./listers.ts";
import type { ListerWatcher, ListOptions } from "./listwatch.ts";
import { newSharedIndexInformer, type SharedIndexInformer } from "./shared-informer.ts";

export const gvrString = (r: GroupVersionResource) => `${r.group || "core"}/${r.version}/${r.resource}`;

/** Makes the list-and-watch of one resource, in `namespace` ("" for all), with the list tweak applied. */
export type NewListWatchFunc = (
  resource: GroupVersionResource,
  namespace: string,
  tweakListOptions?: (opts: ListOptions) => void,
) => ListerWatcher;

export interface SharedInformerFactoryOptions {
  /** Watch one namespace only (WithNamespace); default all. */
  namespace?: string;
  /** Changes every list and watch's options, e.g. a label selector (WithTweakListOptions). */
  tweakListOptions?: (opts: ListOptions) => void;
  /** Resync periods by resource (gvrString), overriding the default (WithCustomResyncConfig). */
  customResyncMs?: Record<string, number>;
  /** A transform for every informer (WithTransform). */
  transform?: (obj: KubeObject) => KubeObject;
  clock?: Clock;
  random?: () => number;
  minWatchTimeoutMs?: number;
  watchErrorHandler?: (err: unknown) => void;
}

// #region factory
export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedIndexInformer>();
  private readonly running = new Map<string, Promise<void>>();
  private shuttingDown = false;

  constructor(
    private readonly newListWatch: NewListWatchFunc,
    private readonly defaultResyncMs: number,
    private readonly opts: SharedInformerFactoryOptions = {},
  ) {}

  /** The shared informer of `resource`, made on first ask (InformerFor). */
  informerFor(resource: GroupVersionResource): SharedIndexInformer {
    const key = gvrString(resource);
    let informer = this.informers.get(key);
    if (informer) return informer;
    const lw = this.newListWatch(resource, this.opts.namespace ?? "", this.opts.tweakListOptions);
    informer = newSharedIndexInformer(lw, this.opts.customResyncMs?.[key] ?? this.defaultResyncMs, {
      clock: this.opts.clock,
      random: this.opts.random,
      name: key,
      minWatchTimeoutMs: this.opts.minWatchTimeoutMs,
      watchErrorHandler: this.opts.watchErrorHandler,
    });
    if (this.opts.transform) informer.setTransform(this.opts.transform);
    this.informers.set(key, informer);
    return informer;
  }

  /** A lister over the shared informer's cache. */
  lister(resource: GroupVersionResource): Lister {
    return new Lister(this.informerFor(resource).getIndexer());
  }

  /** Starts every informer not yet started; they run until `signal` aborts (Start). */
  start(signal: AbortSignal): void {
    if (this.shuttingDown) return;
    for (const [key, informer] of this.informers) {
      if (this.running.has(key)) continue;
      this.running.set(key, informer.run(signal));
    }
  }

  /** Waits until every started informer has synced, or `signal` aborts; says which did (WaitForCacheSync). */
  async waitForCacheSync(signal?: AbortSignal): Promise<Map<string, boolean>> {
    const res = new Map<string, boolean>();
    for (const key of this.running.keys()) {
      const informer = this.informers.get(key)!;
      res.set(
        key,
        await waitForCacheSyncWithClock(this.opts.clock ?? realClock, signal, () => informer.hasSynced()),
      );
    }
    return res;
  }

  /** Waits for every started informer to stop; call after aborting start's signal (Shutdown). */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    await Promise.all(this.running.values());
  }
}
// #endregion factory

/** Upstream polls every 100 ms (syncedPollPeriod). */
const syncedPollPeriodMs = 100;

/**
 * Resolves true once every `hasSynced` is true, false if `signal` aborts first
 * (cache.WaitForCacheSync), polling on the wall clock.
 */
export async function waitForCacheSync(
  signal: AbortSignal | undefined,
  ...hasSynced: (() => boolean)[]
): Promise<boolean> {
  return waitForCacheSyncWithClock(realClock, signal, ...hasSynced);
}

/** waitForCacheSync polling on `clock` (a test's FakeClock must be stepped for the poll to move). */
export async function waitForCacheSyncWithClock(
  clock: Clock,
  signal: AbortSignal | undefined,
  ...hasSynced: (() => boolean)[]
): Promise<boolean> {
  for (;;) {
    if (hasSynced.every((f) => f())) return true;
    if (signal?.aborted) return false;
    // Let queued work (the pop loop, the handlers) run before looking again, then wait a poll period.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (hasSynced.every((f) => f())) return true;
    if (signal?.aborted) return false;
    // sleep() removes its abort listener when the timer fires: no listener piles up per poll.
    await sleep(clock, syncedPollPeriodMs, signal);
  }
}
