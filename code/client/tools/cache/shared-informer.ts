/**
 * SharedIndexInformer — one list-and-watch, one cache, many handlers: the reflector fills a
 * DeltaFIFO, one loop pops it into the indexer, and every change is fanned out to each
 * registered handler through that handler's own unbounded buffer.
 * Mirrors kubernetes/client-go tools/cache/shared_informer.go (SharedIndexInformer, sharedIndexInformer,
 * sharedProcessor, processorListener, AddEventHandlerWithResyncPeriod, RemoveEventHandler,
 * SetTransform, HandleDeltas, shouldResync, determineResyncPeriod), controller.go (processDeltas,
 * ResourceEventHandler) and the synctrack package (SingleFileTracker).
 *
 * Solves:
 * - ten controllers interested in pods must not open ten watches and hold ten caches: they share
 *   one informer and register handlers on it;
 * - a slow handler (one that calls the API server, say) must not delay the others nor the cache:
 *   each handler gets its own buffer and its own loop, and the cache is written before any
 *   handler is told;
 * - each handler may want periodic resyncs at its own period; the reflector ticks at the smallest
 *   (the resync check period) and only handlers whose period is due receive the Sync updates;
 * - a controller must not act on a half-filled cache: `hasSynced` says when the first list has
 *   reached the indexer, and a registration's `hasSynced` when it has reached that handler too.
 *
 * Invariants:
 * - the indexer is updated before handlers are notified, so a handler reading the cache sees
 *   at least the state it was told about;
 * - each handler sees its notifications in the order the informer processed them; no
 *   notification is dropped while the handler is registered and the informer runs;
 * - a relist's Replaced delta whose resourceVersion is unchanged is a sync, delivered only to
 *   handlers due for a resync.
 *
 * @upstream kubernetes/client-go tools/cache/shared_informer.go (SharedIndexInformer, sharedIndexInformer, sharedProcessor, processorListener, AddEventHandlerWithResyncPeriod, RemoveEventHandler, SetTransform, shouldResync, determineResyncPeriod, minimumResyncPeriod)
 * @upstream kubernetes/client-go tools/cache/controller.go (ResourceEventHandler, ResourceEventHandlerFuncs, processDeltas)
 * @upstream kubernetes/client-go tools/cache/synctrack/synctrack.go (SingleFileTracker)
 * @chapter 04-informers
 */

import type { KubeObject } from "../../../api/meta.ts";
import { type Clock, realClock } from "../../util/clock.ts";
import { Cache } from "./cache.ts";
import {
  type DeletedFinalStateUnknown,
  DeltaFIFO,
  type Deltas,
  deletionHandlingMetaNamespaceKeyFunc,
  FIFOClosedError,
} from "./delta-fifo.ts";
import { type Indexer, type Indexers, metaNamespaceIndexFunc, NamespaceIndex } from "./index.ts";
import type { ListerWatcher } from "./listwatch.ts";
import { Reflector } from "./reflector.ts";
import type { KeyFunc } from "./store.ts";

// #region handler
/** What a controller registers (ResourceEventHandler); a method may return a promise to be awaited. */
export interface ResourceEventHandler<T = KubeObject> {
  onAdd?(obj: T, isInInitialList: boolean): void | Promise<void>;
  onUpdate?(oldObj: T, newObj: T): void | Promise<void>;
  /** `obj` is a DeletedFinalStateUnknown when the deletion was inferred from a relist. */
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void | Promise<void>;
}
// #endregion handler

/** What addEventHandler returns: the handle to remove it by, and its own hasSynced. */
export interface ResourceEventHandlerRegistration {
  hasSynced(): boolean;
}

type Notification<T> =
  | { kind: "add"; obj: T; isInInitialList: boolean }
  | { kind: "update"; oldObj: T; newObj: T }
  | { kind: "delete"; obj: T | DeletedFinalStateUnknown<T> };

/** Upstream refuses handler resync periods below one second (minimumResyncPeriod). */
export const minimumResyncPeriodMs = 1000;

/** A handler's period, given the informer's check period (determineResyncPeriod). */
export function determineResyncPeriod(desiredMs: number, checkMs: number): number {
  if (desiredMs === 0) return 0;
  // The informer never ticks: a handler's period cannot be honoured.
  if (checkMs === 0) return 0;
  return Math.max(desiredMs, checkMs);
}

// #region listener
/**
 * One handler with its unbounded buffer and its own loop (processorListener): `add` never
 * waits, so the informer's loop never waits for a handler.
 */
class ProcessorListener<T> implements ResourceEventHandlerRegistration {
  private buffer: (Notification<T> | undefined)[] = [];
  private head = 0;
  private wake?: () => void;
  private stopped = false;
  // Initial-list adds given to the handler but not yet handled (synctrack.SingleFileTracker).
  private pendingInitial = 0;
  nextResync = 0;
  done: Promise<void> = Promise.resolve();

  constructor(
    readonly handler: ResourceEventHandler<T>,
    readonly requestedResyncPeriodMs: number,
    public resyncPeriodMs: number,
    now: number,
    private readonly informerSynced: () => boolean,
    private readonly onError: (err: unknown) => void,
  ) {
    this.determineNextResync(now);
  }

  add(n: Notification<T>): void {
    if (this.stopped) return;
    if (n.kind === "add" && n.isInInitialList) this.pendingInitial++;
    this.buffer.push(n);
    this.wake?.();
  }

  hasSynced(): boolean {
    return this.informerSynced() && this.pendingInitial === 0;
  }

  /** How many notifications wait for the handler. */
  pending(): number {
    return this.buffer.length - this.head;
  }

  start(): void {
    this.done = this.run();
  }

  stop(): void {
    this.stopped = true;
    this.buffer = [];
    this.head = 0;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (this.head === this.buffer.length) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = undefined;
        continue;
      }
      const n = this.buffer[this.head]!;
      this.buffer[this.head++] = undefined;
      // Compact now and then, so the buffer does not grow with everything ever delivered.
      if (this.head > 1024 && this.head * 2 > this.buffer.length) {
        this.buffer = this.buffer.slice(this.head);
        this.head = 0;
      }
      try {
        if (n.kind === "add") await this.handler.onAdd?.(n.obj, n.isInInitialList);
        else if (n.kind === "update") await this.handler.onUpdate?.(n.oldObj, n.newObj);
        else await this.handler.onDelete?.(n.obj);
      } catch (err) {
        this.onError(err);
      } finally {
        if (n.kind === "add" && n.isInInitialList) this.pendingInitial--;
      }
    }
  }

  shouldResync(now: number): boolean {
    return this.resyncPeriodMs !== 0 && now >= this.nextResync;
  }

  determineNextResync(now: number): void {
    this.nextResync = now + this.resyncPeriodMs;
  }
}
// #endregion listener

/** The handlers and which of them are due for a resync right now (sharedProcessor). */
class SharedProcessor<T> {
  readonly listeners = new Map<ProcessorListener<T>, boolean>();
  private started = false;

  constructor(private readonly clock: Clock) {}

  addListener(l: ProcessorListener<T>): void {
    this.listeners.set(l, false);
    if (this.started) l.start();
  }

  removeListener(l: ProcessorListener<T>): boolean {
    if (!this.listeners.delete(l)) return false;
    l.stop();
    return true;
  }

  /** Sync notifications go only to the handlers flagged by the last shouldResync. */
  distribute(n: Notification<T>, sync: boolean): void {
    for (const [l, isSyncing] of this.listeners) if (!sync || isSyncing) l.add(n);
  }

  run(): void {
    this.started = true;
    for (const l of this.listeners.keys()) l.start();
  }

  async stop(): Promise<void> {
    const ls = [...this.listeners.keys()];
    for (const l of ls) l.stop();
    await Promise.all(ls.map((l) => l.done));
  }

  // #region should-resync
  /** Marks the handlers whose own period is due, and says whether any is (shouldResync). */
  shouldResync(): boolean {
    const now = this.clock.now();
    let needed = false;
    for (const l of this.listeners.keys()) {
      const due = l.shouldResync(now);
      this.listeners.set(l, due);
      if (due) {
        needed = true;
        l.determineNextResync(now);
      }
    }
    return needed;
  }
  // #endregion should-resync

  resyncCheckPeriodChanged(checkMs: number): void {
    for (const l of this.listeners.keys()) {
      l.resyncPeriodMs = determineResyncPeriod(l.requestedResyncPeriodMs, checkMs);
    }
  }
}

export interface SharedIndexInformerOptions<T> {
  /** The resync period of handlers added without one, and the first resync check period. */
  defaultEventHandlerResyncPeriodMs?: number;
  indexers?: Indexers<T>;
  clock?: Clock;
  random?: () => number;
  name?: string;
  /** Handler exceptions land here (upstream: a panic). */
  onHandlerError?: (err: unknown) => void;
  /** Errors that ended a list-and-watch land here (SetWatchErrorHandler). */
  watchErrorHandler?: (err: unknown) => void;
  /** Passed to the reflector (tests shorten it). */
  minWatchTimeoutMs?: number;
  /** The reflector's list page size (client-go's Config.WatchListPageSize; tests make it small). */
  watchListPageSize?: number;
}

export class SharedIndexInformer<T extends KubeObject = KubeObject> {
  private readonly indexer: Cache<T>;
  private readonly processor: SharedProcessor<T>;
  private readonly clock: Clock;
  private fifo?: DeltaFIFO<T>;
  private reflector?: Reflector<T>;
  private transform?: (obj: T) => T;
  private resyncCheckPeriodMs: number;
  private readonly defaultHandlerResyncMs: number;
  private started = false;
  private stopped = false;

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly opts: SharedIndexInformerOptions<T> = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.indexer = new Cache<T>(deletionHandlingMetaNamespaceKeyFunc as KeyFunc<T>, opts.indexers ?? {});
    this.processor = new SharedProcessor<T>(this.clock);
    this.defaultHandlerResyncMs = opts.defaultEventHandlerResyncPeriodMs ?? 0;
    this.resyncCheckPeriodMs = this.defaultHandlerResyncMs;
  }

  getStore(): Indexer<T> {
    return this.indexer;
  }

  getIndexer(): Indexer<T> {
    return this.indexer;
  }

  addIndexers(indexers: Indexers<T>): void {
    this.indexer.addIndexers(indexers);
  }

  /** True once the first list has been popped into the indexer (HasSynced). */
  hasSynced(): boolean {
    return this.fifo?.hasSynced() ?? false;
  }

  lastSyncResourceVersion(): string {
    return this.reflector?.lastSyncResourceVersion() ?? "";
  }

  isStopped(): boolean {
    return this.stopped;
  }

  /** Sets a function applied to every object before it is stored (SetTransform); only before run. */
  setTransform(fn: (obj: T) => T): void {
    if (this.started) throw new Error("informer has already started");
    this.transform = fn;
  }

  // #region add-handler
  /**
   * Registers a handler. On a running informer it is first told of every cached object as an
   * initial-list add, so a late handler catches up without a relist.
   */
  addEventHandler(
    handler: ResourceEventHandler<T>,
    resyncPeriodMs?: number,
  ): ResourceEventHandlerRegistration {
    if (this.stopped)
      throw new Error("handler was not added to shared informer because it has stopped already");
    let period = resyncPeriodMs ?? this.defaultHandlerResyncMs;
    if (period > 0) {
      if (period < minimumResyncPeriodMs) period = minimumResyncPeriodMs;
      if (period < this.resyncCheckPeriodMs) {
        if (this.started) {
          // The reflector's ticker is running at the check period; a handler cannot go faster.
          period = this.resyncCheckPeriodMs;
        } else {
          this.resyncCheckPeriodMs = period;
          this.processor.resyncCheckPeriodChanged(period);
        }
      }
    }
    const listener = new ProcessorListener<T>(
      handler,
      period,
      determineResyncPeriod(period, this.resyncCheckPeriodMs),
      this.clock.now(),
      () => this.hasSynced(),
      (err) => this.opts.onHandlerError?.(err),
    );
    this.processor.addListener(listener);
    if (this.started) {
      for (const obj of this.indexer.list()) listener.add({ kind: "add", obj, isInInitialList: true });
    }
    return listener;
  }
  // #endregion add-handler

  removeEventHandler(reg: ResourceEventHandlerRegistration): void {
    if (reg instanceof ProcessorListener) this.processor.removeListener(reg);
  }

  // #region run
  /** Runs the reflector and the pop loop until `signal` aborts; resolves once everything stopped. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.started || this.stopped) return;
    this.started = true;
    const fifo = new DeltaFIFO<T>({
      keyFunction: deletionHandlingMetaNamespaceKeyFunc as KeyFunc<T>,
      knownObjects: this.indexer,
      emitDeltaTypeReplaced: true,
      transformer: this.transform,
    });
    this.fifo = fifo;
    this.reflector = new Reflector<T>(this.lw, fifo, {
      name: this.opts.name,
      resyncPeriodMs: this.resyncCheckPeriodMs,
      shouldResync: () => this.processor.shouldResync(),
      clock: this.clock,
      random: this.opts.random,
      minWatchTimeoutMs: this.opts.minWatchTimeoutMs,
      watchListPageSize: this.opts.watchListPageSize,
      watchErrorHandler: this.opts.watchErrorHandler,
    });
    this.processor.run();
    const onAbort = () => fifo.close();
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) fifo.close();
    const reflecting = this.reflector.run(signal);
    try {
      for (;;) {
        try {
          await fifo.pop((deltas, isInInitialList) => this.handleDeltas(deltas, isInInitialList));
        } catch (err) {
          if (err instanceof FIFOClosedError) break;
          this.opts.onHandlerError?.(err);
        }
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.stopped = true;
      await reflecting;
      await this.processor.stop();
    }
  }
  // #endregion run

  // #region process-deltas
  /** Applies one key's deltas to the indexer, then tells the handlers (HandleDeltas / processDeltas). */
  private handleDeltas(deltas: Deltas<T>, isInInitialList: boolean): void {
    for (const d of deltas) {
      const obj = d.object;
      if (d.type === "Deleted") {
        this.indexer.delete(obj as T);
        this.processor.distribute({ kind: "delete", obj }, false);
        continue;
      }
      const newObj = obj as T;
      const old = this.indexer.get(newObj);
      if (old !== undefined) {
        this.indexer.update(newObj);
        // A relist that returns an object unchanged is no news: treat it as a resync.
        const isSync =
          d.type === "Sync" ||
          (d.type === "Replaced" && old.metadata.resourceVersion === newObj.metadata.resourceVersion);
        this.processor.distribute({ kind: "update", oldObj: old, newObj }, isSync);
      } else {
        this.indexer.add(newObj);
        this.processor.distribute({ kind: "add", obj: newObj, isInInitialList }, false);
      }
    }
  }
  // #endregion process-deltas
}

/** A SharedIndexInformer with the namespace index, as most callers want (NewSharedIndexInformer + NamespaceIndex). */
export function newSharedIndexInformer<T extends KubeObject>(
  lw: ListerWatcher<T>,
  resyncPeriodMs: number,
  opts: Omit<SharedIndexInformerOptions<T>, "defaultEventHandlerResyncPeriodMs"> = {},
): SharedIndexInformer<T> {
  return new SharedIndexInformer<T>(lw, {
    ...opts,
    defaultEventHandlerResyncPeriodMs: resyncPeriodMs,
    indexers: { [NamespaceIndex]: metaNamespaceIndexFunc as (o: T) => string[], ...opts.indexers },
  });
}
