/**
 * The workqueue — the queue every controller takes its keys from: add a key, a worker gets it,
 * works, and says done.
 * Upstream: kubernetes/client-go util/workqueue/queue.go, and the others listed below.
 *
 * Solves:
 * - many events about one object must cause one reconcile, not one each: a key added while it is
 *   still waiting is not queued twice (duplicates collapse);
 * - two workers must never reconcile the same object at once (they would race each other's
 *   writes): a key that is being processed is not handed out again until `done`;
 * - an event that arrives *while* its key is being processed must not be lost (the worker may
 *   already have read the old state): the key is remembered and queued again on `done`.
 *
 * Invariants (the three sets):
 * - `dirty` holds every key that needs processing; `processing` every key a worker holds;
 * - every key in `queue` is in `dirty` and not in `processing`, and appears in `queue` once;
 * - a key in both `dirty` and `processing` was added during processing: it is not in `queue`
 *   and goes there when `done` is called.
 * - after `shutDown` no key is accepted; `get` still hands out what is queued, then answers
 *   `shutdown: true`.
 * - `shutDownWithDrain` resolves when no key is being processed and none was just put back for
 *   another round (upstream's may return while such a key waits; ours waits for it too).
 *
 * JavaScript has one thread, so where upstream takes a mutex and waits on a condition variable,
 * `get` returns a promise that is resolved (in arrival order) when a key can be handed out.
 *
 * @upstream kubernetes/client-go util/workqueue/queue.go (TypedInterface, Typed, Queue, DefaultQueue, Add, Get, Done, ShutDown, ShutDownWithDrain)
 * @upstream kubernetes/client-go util/workqueue/doc.go (the package's promises: fair, stingy, multiple consumers)
 * @chapter 04-informers
 */

/** What every controller's queue offers (client-go's TypedInterface). */
export interface TypedInterface<T> {
  /** Marks `item` as needing processing. */
  add(item: T): void;
  /** How many items wait to be handed out — for information only, never to gate add or get. */
  len(): number;
  /** Waits for an item; `shutdown: true` (and no item) once the queue is shut down and empty. */
  get(): Promise<GetResult<T>>;
  /** Marks `item` as no longer being processed; queues it again if it was added meanwhile. */
  done(item: T): void;
  /** Refuses new items and tells waiting workers to stop. */
  shutDown(): void;
  /** Like shutDown, then waits until every item being processed is done. */
  shutDownWithDrain(): Promise<void>;
  shuttingDown(): boolean;
}

export type GetResult<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

/**
 * The storage that decides the order (client-go's Queue): a FIFO unless a caller plugs in another.
 * Always called by the workqueue itself, with the three-set rules already applied.
 */
export interface Queue<T> {
  /** Called when an item already waiting is added again (a priority queue may move it). */
  touch(item: T): void;
  push(item: T): void;
  len(): number;
  pop(): T;
}

/** DefaultQueue — first in, first out. */
export function defaultQueue<T>(): Queue<T> {
  const items: T[] = [];
  let head = 0;
  return {
    touch() {},
    push: (item) => {
      items.push(item);
    },
    len: () => items.length - head,
    pop() {
      const item = items[head++];
      // Compact now and then, so a long-lived queue does not keep every key it ever held.
      if (head > 1024 && head * 2 > items.length) {
        items.splice(0, head);
        head = 0;
      }
      return item;
    },
  };
}

export interface TypedQueueConfig<T> {
  /** Upstream names a queue for its metrics; kept for the reader, unused here (no metrics). */
  name?: string;
  /** The order; a FIFO when absent. */
  queue?: Queue<T>;
}

/** NewTyped — a work queue with the FIFO order. */
export function newTyped<T>(): Typed<T> {
  return new Typed<T>({});
}

/** NewTypedWithConfig. */
export function newTypedWithConfig<T>(config: TypedQueueConfig<T>): Typed<T> {
  return new Typed<T>(config);
}

// #region three-sets
export class Typed<T> implements TypedInterface<T> {
  /** The order in which items are handed out; each is in `dirty` and not in `processing`. */
  private readonly queue: Queue<T>;
  /** Every item that needs processing. */
  private readonly dirty = new Set<T>();
  /** Every item a worker holds; such an item may also be dirty (added again meanwhile). */
  private readonly processing = new Set<T>();
  /** Workers parked in `get`, first come first served. Non-empty only while `queue` is empty. */
  private readonly getters: ((r: GetResult<T>) => void)[] = [];
  /** `shutDownWithDrain` callers waiting for `processing` to empty. */
  private drainers: (() => void)[] = [];
  private shutting = false;

  constructor(config: TypedQueueConfig<T> = {}) {
    this.queue = config.queue ?? defaultQueue<T>();
  }

  add(item: T): void {
    if (this.shutting) return;
    if (this.dirty.has(item)) {
      // Already waiting (or already marked for another round): one processing covers both adds.
      if (!this.processing.has(item)) this.queue.touch(item);
      return;
    }
    this.dirty.add(item);
    // Being processed: do not hand it to a second worker; done() will queue it.
    if (this.processing.has(item)) return;
    this.queue.push(item);
    this.handOut();
  }

  len(): number {
    return this.queue.len();
  }

  get(): Promise<GetResult<T>> {
    if (this.queue.len() > 0) return Promise.resolve({ item: this.take(), shutdown: false });
    if (this.shutting) return Promise.resolve({ item: undefined, shutdown: true });
    return new Promise((resolve) => this.getters.push(resolve));
  }

  done(item: T): void {
    this.processing.delete(item);
    if (this.dirty.has(item)) {
      // Added while it was being processed: it needs another round.
      this.queue.push(item);
      this.handOut();
    } else if (this.processing.size === 0) {
      this.wakeDrainers();
    }
  }

  /** Moves the next item from `queue` to `processing`; the only way an item is handed out. */
  private take(): T {
    const item = this.queue.pop();
    this.processing.add(item);
    this.dirty.delete(item);
    return item;
  }
  // #endregion three-sets

  /** Gives queued items to parked workers, oldest worker first. */
  private handOut(): void {
    while (this.getters.length > 0 && this.queue.len() > 0) {
      const resolve = this.getters.shift()!;
      resolve({ item: this.take(), shutdown: false });
    }
  }

  // #region shutdown
  shutDown(): void {
    this.shutting = true;
    // A parked worker exists only while the queue is empty, so every one of them can stop now.
    for (const resolve of this.getters.splice(0)) resolve({ item: undefined, shutdown: true });
    // ShutDown after ShutDownWithDrain stops waiting for the drain, as upstream's does.
    this.wakeDrainers();
  }

  shutDownWithDrain(): Promise<void> {
    const wait = new Promise<void>((resolve) => {
      if (this.processing.size === 0) resolve();
      else this.drainers.push(resolve);
    });
    this.shutting = true;
    for (const resolve of this.getters.splice(0)) resolve({ item: undefined, shutdown: true });
    return wait;
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  private wakeDrainers(): void {
    const drainers = this.drainers;
    this.drainers = [];
    for (const resolve of drainers) resolve();
  }
  // #endregion shutdown
}
