/**
 * DeltaFIFO — the queue between the reflector and the informer: for each object key, the list
 * of changes (deltas) not yet processed, handed out one key at a time in first-changed order.
 * Mirrors kubernetes/client-go tools/cache/delta_fifo.go (DeltaFIFO, Delta, Deltas, DeletedFinalStateUnknown,
 * dedupDeltas, Replace, Resync, Pop) and controller.go (DeletionHandlingMetaNamespaceKeyFunc).
 *
 * Solves:
 * - you want to process every object change (delta) at most once;
 * - when you process an object, you want to see everything that happened to it since you last
 *   looked (an add then an update is two deltas, not one state) — a handler that must see a
 *   delete sees it even if the object was re-created before the handler ran;
 * - you want to process the deletion of objects you never saw disappear: a relist that lacks an
 *   object the cache knows queues a Deleted with a DeletedFinalStateUnknown tombstone;
 * - you may want to re-process every object now and then (resync) without a server round trip.
 *
 * Invariants:
 * - a key is in `queue` if and only if it is in `items`, and at most once; `items[key]` is never
 *   empty;
 * - two consecutive Deleted deltas of one key collapse into one (dedupDeltas);
 * - `hasSynced()` is true once the first Replace (or any add/update/delete before it) has been
 *   called and every item that Replace queued has been popped and processed;
 * - `knownObjects` (the informer's indexer) is read, never written, here.
 *
 * Threading: upstream holds a lock while `process` runs so nothing is queued mid-process; here
 * `process` runs synchronously inside `pop` (the informer's is synchronous), which gives the same.
 *
 * @upstream kubernetes/client-go tools/cache/delta_fifo.go (DeltaFIFO, DeltaFIFOOptions, Delta, Deltas, DeltaType, DeletedFinalStateUnknown, dedupDeltas, isDeletionDup, queueActionLocked, Replace, Resync, Pop, ErrRequeue, ErrFIFOClosed)
 * @upstream kubernetes/client-go tools/cache/controller.go (DeletionHandlingMetaNamespaceKeyFunc)
 * @chapter 04-informers
 */

import type { KubeObject } from "../../../api/meta.ts";
import { KeyError, type KeyFunc, metaNamespaceKeyFunc } from "./store.ts";

// #region deltas
export type DeltaType = "Added" | "Updated" | "Deleted" | "Replaced" | "Sync";

/**
 * An object the informer knew but whose deletion it did not see: the watch was down when it
 * happened, and the relist simply lacks it. `obj` is the last state the cache had (maybe stale,
 * or undefined if the cache had none).
 */
export class DeletedFinalStateUnknown<T = KubeObject> {
  constructor(
    readonly key: string,
    readonly obj: T | undefined,
  ) {}
}

export interface Delta<T = KubeObject> {
  type: DeltaType;
  object: T | DeletedFinalStateUnknown<T>;
}

export type Deltas<T = KubeObject> = Delta<T>[];

export const oldest = <T>(d: Deltas<T>): Delta<T> | undefined => d[0];
export const newest = <T>(d: Deltas<T>): Delta<T> | undefined => d[d.length - 1];
// #endregion deltas

/** metaNamespaceKeyFunc that also names a tombstone by the key it carries (controller.go). */
export function deletionHandlingMetaNamespaceKeyFunc(obj: unknown): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  return metaNamespaceKeyFunc(obj);
}

/** Where the FIFO looks up the objects the informer already has (KeyListerGetter). */
export interface KeyListerGetter<T = KubeObject> {
  listKeys(): string[];
  getByKey(key: string): T | undefined;
}

/** Thrown by a pop's process function to put the item back (ErrRequeue). */
export class ErrRequeue extends Error {
  constructor(readonly err?: unknown) {
    super(`requeue: ${err === undefined ? "no error" : String(err)}`);
    this.name = "ErrRequeue";
  }
}

/** Pop on a closed, empty queue (ErrFIFOClosed). */
export class FIFOClosedError extends Error {
  constructor() {
    super("DeltaFIFO: manipulating with closed queue");
    this.name = "FIFOClosedError";
  }
}

export interface DeltaFIFOOptions<T = KubeObject> {
  /** Defaults to metaNamespaceKeyFunc. */
  keyFunction?: KeyFunc<T>;
  /** The informer's indexer: lets Delete, Replace and Resync know what the consumer holds. */
  knownObjects?: KeyListerGetter<T>;
  /** Replace emits Replaced (true, as every shared informer sets) or, for old callers, Sync. */
  emitDeltaTypeReplaced?: boolean;
  /** Applied to each object as it is queued (not to Sync or tombstones): drop fields early. */
  transformer?: (obj: T) => T;
}

export type PopProcessFunc<T> = (deltas: Deltas<T>, isInInitialList: boolean) => void;

// #region dedup
/** Collapses the last two deltas if they are both deletions (dedupDeltas). */
export function dedupDeltas<T>(deltas: Deltas<T>): Deltas<T> {
  const n = deltas.length;
  if (n < 2) return deltas;
  const merged = isDeletionDup(deltas[n - 1], deltas[n - 2]);
  if (!merged) return deltas;
  return [...deltas.slice(0, n - 2), merged];
}

/** Two deletions are one; keep the one that knows the final state (isDeletionDup). */
function isDeletionDup<T>(a: Delta<T>, b: Delta<T>): Delta<T> | undefined {
  if (a.type !== "Deleted" || b.type !== "Deleted") return undefined;
  // A tombstone's state may be stale; a real deletion event carries the final state.
  if (b.object instanceof DeletedFinalStateUnknown) return a;
  return b;
}
// #endregion dedup

export class DeltaFIFO<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, Deltas<T>>();
  private queue: string[] = [];
  // populated: something was added, updated, deleted or replaced; initialPopulationCount: items
  // of the first Replace not yet popped. Together they define hasSynced.
  private populated = false;
  private initialPopulationCount = 0;
  private closed = false;
  private waiters: (() => void)[] = [];
  private readonly keyFunc: KeyFunc<T>;
  private readonly knownObjects?: KeyListerGetter<T>;
  private readonly emitDeltaTypeReplaced: boolean;
  private readonly transformer?: (obj: T) => T;

  constructor(opts: DeltaFIFOOptions<T> = {}) {
    this.keyFunc = opts.keyFunction ?? metaNamespaceKeyFunc;
    this.knownObjects = opts.knownObjects;
    this.emitDeltaTypeReplaced = opts.emitDeltaTypeReplaced ?? false;
    this.transformer = opts.transformer;
  }

  /** The key of an object, a tombstone, or a Deltas (its newest object) (KeyOf). */
  keyOf(obj: T | DeletedFinalStateUnknown<T> | Deltas<T>): string {
    if (Array.isArray(obj)) {
      const n = newest(obj);
      if (!n) throw new KeyError(obj, "0 length Deltas object; can't get key");
      obj = n.object;
    }
    if (obj instanceof DeletedFinalStateUnknown) return obj.key;
    try {
      return this.keyFunc(obj);
    } catch (err) {
      throw err instanceof KeyError ? err : new KeyError(obj, err);
    }
  }

  hasSynced(): boolean {
    return this.populated && this.initialPopulationCount === 0;
  }

  add(obj: T): void {
    this.populated = true;
    this.queueAction("Added", obj);
  }

  update(obj: T): void {
    this.populated = true;
    this.queueAction("Updated", obj);
  }

  // #region delete
  /**
   * Queues a deletion — unless neither the queue nor the consumer has the object: a delete of
   * something nobody saw would reach the handlers as a delete of an unknown object.
   */
  delete(obj: T | DeletedFinalStateUnknown<T>): void {
    const id = this.keyOf(obj);
    this.populated = true;
    const inItems = this.items.has(id);
    if (this.knownObjects === undefined) {
      if (!inItems) return;
    } else if (this.knownObjects.getByKey(id) === undefined && !inItems) {
      return;
    }
    this.queueAction("Deleted", obj);
  }
  // #endregion delete

  /** Puts a popped item back, unless the key has been queued again since (AddIfNotPresent). */
  addIfNotPresent(deltas: Deltas<T>): void {
    this.addIfNotPresentById(this.keyOf(deltas), deltas);
  }

  private addIfNotPresentById(id: string, deltas: Deltas<T>): void {
    this.populated = true;
    if (this.items.has(id)) return;
    this.queue.push(id);
    this.items.set(id, deltas);
    this.broadcast();
  }

  // #region queue-action
  private queueAction(
    type: DeltaType,
    obj: T | DeletedFinalStateUnknown<T>,
    internalType: DeltaType = type,
  ): void {
    const id = this.keyOf(obj);
    if (this.transformer && !(obj instanceof DeletedFinalStateUnknown) && internalType !== "Sync") {
      obj = this.transformer(obj);
    }
    const old = this.items.get(id);
    const next = dedupDeltas([...(old ?? []), { type, object: obj }]);
    if (old === undefined) this.queue.push(id);
    this.items.set(id, next);
    this.broadcast();
  }
  // #endregion queue-action

  /** The newest state of every queued key (List). */
  list(): (T | DeletedFinalStateUnknown<T>)[] {
    return [...this.items.values()].map((d) => newest(d)!.object);
  }

  /** The queued keys, in pop order (ListKeys). */
  listKeys(): string[] {
    return [...this.queue];
  }

  /** A copy of the deltas queued for `obj`'s key (Get). */
  get(obj: T): Deltas<T> | undefined {
    return this.getByKey(this.keyOf(obj));
  }

  getByKey(key: string): Deltas<T> | undefined {
    const d = this.items.get(key);
    return d ? [...d] : undefined;
  }

  close(): void {
    this.closed = true;
    this.broadcast();
  }

  isClosed(): boolean {
    return this.closed;
  }

  // #region pop
  /**
   * Waits for a key, removes it with its deltas and hands them to `process`. If `process`
   * throws ErrRequeue the deltas go back on the queue (at its end, unless the key was queued
   * again meanwhile) and the ErrRequeue's inner error, if any, is thrown.
   */
  async pop(process: PopProcessFunc<T>): Promise<Deltas<T>> {
    while (this.queue.length === 0) {
      if (this.closed) throw new FIFOClosedError();
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    const isInInitialList = !this.hasSynced();
    const id = this.queue.shift()!;
    const item = this.items.get(id)!;
    this.items.delete(id);
    try {
      process(item, isInInitialList);
    } catch (err) {
      if (!(err instanceof ErrRequeue)) throw err;
      this.addIfNotPresentById(id, item);
      if (err.err !== undefined) throw err.err;
    } finally {
      // Counted down after processing, so hasSynced() never reports a sync whose last item is
      // still being handled.
      if (this.initialPopulationCount > 0) this.initialPopulationCount--;
    }
    return item;
  }
  // #endregion pop

  // #region replace
  /**
   * A relist: queue a Replaced (or Sync) delta for every listed object, and a Deleted tombstone
   * for every key that is queued or known to the consumer but not in the list — its deletion
   * happened while the reflector was not watching.
   */
  replace(list: T[], _resourceVersion: string): void {
    const keys = new Set<string>();
    const action: DeltaType = this.emitDeltaTypeReplaced ? "Replaced" : "Sync";
    for (const item of list) {
      keys.add(this.keyOf(item));
      this.queueAction(action, item, "Replaced");
    }
    let queuedDeletions = 0;
    // Keys queued but not listed: their newest state is the best final state we have.
    for (const [k, old] of [...this.items]) {
      if (keys.has(k)) continue;
      let last = newest(old)?.object;
      if (last instanceof DeletedFinalStateUnknown) last = last.obj;
      queuedDeletions++;
      this.queueAction("Deleted", new DeletedFinalStateUnknown(k, last));
    }
    // Keys the consumer holds, not listed and not already handled above.
    if (this.knownObjects) {
      for (const k of this.knownObjects.listKeys()) {
        if (keys.has(k) || (this.items.get(k)?.length ?? 0) > 0) continue;
        queuedDeletions++;
        this.queueAction("Deleted", new DeletedFinalStateUnknown(k, this.knownObjects.getByKey(k)));
      }
    }
    if (!this.populated) {
      this.populated = true;
      this.initialPopulationCount = keys.size + queuedDeletions;
    }
  }
  // #endregion replace

  // #region resync
  /** Queues a Sync for every known object that has nothing queued (Resync). */
  resync(): void {
    if (!this.knownObjects) return;
    for (const k of this.knownObjects.listKeys()) {
      const obj = this.knownObjects.getByKey(k);
      if (obj === undefined) continue;
      // A queued delta will bring the handler up to date anyway; a Sync behind it would only
      // replay an older state.
      if ((this.items.get(this.keyOf(obj))?.length ?? 0) > 0) continue;
      this.queueAction("Sync", obj);
    }
  }
  // #endregion resync

  private broadcast(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const wake of w) wake();
  }
}
