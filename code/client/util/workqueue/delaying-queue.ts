/**
 * The delaying queue — a workqueue that can add an item later: `addAfter(key, 5000)`.
 * Upstream: kubernetes/client-go util/workqueue/delaying_queue.go, and the others listed below.
 *
 * Solves:
 * - a controller that must look again later (a pod's grace period, a failed call's backoff) must
 *   not sleep in its worker, which would hold the worker and the key; it asks the queue to add the
 *   key when the time comes, and returns.
 *
 * Invariants:
 * - a waiting item is in the heap once (`waitingByData` finds it); adding it again with an
 *   earlier ready time moves it earlier, with a later one changes nothing — the earliest ask wins;
 * - an item leaves the heap by a plain `add` at its ready time, so every rule of the queue
 *   (duplicates collapse, never two workers) still holds; a plain `add` meanwhile does not
 *   remove the waiting entry, which still fires;
 * - one clock timer is armed, for the heap's first entry; after shutdown none is.
 *
 * Upstream runs a goroutine (waitingLoop) fed by a channel, plus a 10 s heartbeat as insurance; with
 * one thread the heap is changed directly and the timer is re-armed when the first entry changes.
 *
 * @upstream kubernetes/client-go util/workqueue/delaying_queue.go (TypedDelayingInterface, delayingType, AddAfter, waitingLoop, waitForPriorityQueue, insert)
 * @chapter 04-informers
 */

import { type Clock, realClock, type Timer } from "../clock.ts";
import { type GetResult, newTyped, type TypedInterface } from "./queue.ts";

/** A queue that can also add an item after a delay (client-go's TypedDelayingInterface). */
export interface TypedDelayingInterface<T> extends TypedInterface<T> {
  /** Adds `item` once `delayMs` has passed; at once if `delayMs <= 0`. */
  addAfter(item: T, delayMs: number): void;
}

export interface TypedDelayingQueueConfig<T> {
  name?: string;
  /** Defaults to the real clock; tests pass a FakeClock. */
  clock?: Clock;
  /** The queue items are added to when ready; a new FIFO workqueue when absent. */
  queue?: TypedInterface<T>;
}

/** NewTypedDelayingQueue. */
export function newTypedDelayingQueue<T>(): TypedDelayingInterface<T> {
  return newTypedDelayingQueueWithConfig<T>({});
}

/** NewTypedDelayingQueueWithConfig. */
export function newTypedDelayingQueueWithConfig<T>(
  config: TypedDelayingQueueConfig<T>,
): TypedDelayingInterface<T> {
  return new DelayingType<T>(config.queue ?? newTyped<T>(), config.clock ?? realClock);
}

/** An item waiting for its time (upstream's waitFor). `index` is its place in the heap. */
interface WaitFor<T> {
  data: T;
  readyAt: number;
  index: number;
}

export class DelayingType<T> implements TypedDelayingInterface<T> {
  /** A min-heap on readyAt (upstream's waitForPriorityQueue). */
  private readonly waiting: WaitFor<T>[] = [];
  private readonly waitingByData = new Map<T, WaitFor<T>>();
  private timer: Timer | undefined;
  private timerDue = Number.POSITIVE_INFINITY;

  constructor(
    private readonly inner: TypedInterface<T>,
    private readonly clock: Clock,
  ) {}

  // #region add-after
  addAfter(item: T, delayMs: number): void {
    if (this.inner.shuttingDown()) return;
    if (delayMs <= 0) {
      this.inner.add(item);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waitingByData.get(item);
    if (existing) {
      // Only ever earlier: an item asked for in 10 ms and then in 1 s is still wanted in 10 ms.
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.up(existing.index);
      }
    } else {
      const entry: WaitFor<T> = { data: item, readyAt, index: this.waiting.length };
      this.waiting.push(entry);
      this.waitingByData.set(item, entry);
      this.up(entry.index);
    }
    this.arm();
  }

  /** Adds every entry whose time has come, then waits for the next one (upstream's waitingLoop). */
  private fireReady(): void {
    this.timer = undefined;
    this.timerDue = Number.POSITIVE_INFINITY;
    if (this.inner.shuttingDown()) return;
    const now = this.clock.now();
    while (this.waiting.length > 0 && this.waiting[0].readyAt <= now) {
      const entry = this.pop();
      this.waitingByData.delete(entry.data);
      this.inner.add(entry.data);
    }
    this.arm();
  }
  // #endregion add-after

  /** Keeps one timer, due when the heap's first entry is. */
  private arm(): void {
    const next = this.waiting[0]?.readyAt ?? Number.POSITIVE_INFINITY;
    if (next === this.timerDue) return;
    this.timer?.stop();
    this.timer = undefined;
    this.timerDue = next;
    if (next === Number.POSITIVE_INFINITY) return;
    this.timer = this.clock.afterFunc(next - this.clock.now(), () => this.fireReady());
  }

  private stopWaiting(): void {
    this.timer?.stop();
    this.timer = undefined;
    this.timerDue = Number.POSITIVE_INFINITY;
    // Nothing waiting will be added now (the queue refuses adds); let it go.
    this.waiting.length = 0;
    this.waitingByData.clear();
  }

  // The plain queue, passed through.
  add(item: T): void {
    this.inner.add(item);
  }
  len(): number {
    return this.inner.len();
  }
  get(): Promise<GetResult<T>> {
    return this.inner.get();
  }
  done(item: T): void {
    this.inner.done(item);
  }
  shutDown(): void {
    this.inner.shutDown();
    this.stopWaiting();
  }
  shutDownWithDrain(): Promise<void> {
    const drained = this.inner.shutDownWithDrain();
    this.stopWaiting();
    return drained;
  }
  shuttingDown(): boolean {
    return this.inner.shuttingDown();
  }

  /** How many items wait for their time — for tests and debugging. */
  waitingLen(): number {
    return this.waiting.length;
  }

  // A binary min-heap on readyAt that keeps each entry's index, so an entry moved earlier can be
  // sifted up from where it is (what container/heap's Fix does upstream).
  private less(i: number, j: number): boolean {
    return this.waiting[i].readyAt < this.waiting[j].readyAt;
  }
  private swap(i: number, j: number): void {
    const h = this.waiting;
    [h[i], h[j]] = [h[j], h[i]];
    h[i].index = i;
    h[j].index = j;
  }
  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) return;
      this.swap(i, parent);
      i = parent;
    }
  }
  private down(i: number): void {
    const n = this.waiting.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      let min = l;
      if (l + 1 < n && this.less(l + 1, l)) min = l + 1;
      if (!this.less(min, i)) return;
      this.swap(i, min);
      i = min;
    }
  }
  private pop(): WaitFor<T> {
    const h = this.waiting;
    this.swap(0, h.length - 1);
    const entry = h.pop()!;
    entry.index = -1;
    this.down(0);
    return entry;
  }
}
