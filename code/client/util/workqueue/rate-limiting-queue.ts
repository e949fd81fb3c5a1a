/**
 * The rate-limiting queue — the queue a controller actually holds: a delaying queue that asks a
 * rate limiter how long a failed key must wait.
 * Upstream: kubernetes/client-go util/workqueue/rate_limiting_queue.go, and the others listed below.
 *
 * Solves:
 * - a worker whose reconcile failed says `addRateLimited(key)` and moves on; the key comes back
 *   after its backoff, and `forget(key)` after a success resets the backoff. The worker never
 *   sleeps, never tracks failures itself, and never holds the key while it waits.
 *
 * Invariants:
 * - `addRateLimited(item)` is `addAfter(item, limiter.when(item))`: one failure counted per call;
 * - `forget` only clears the limiter's memory of the item; the worker must still call `done`;
 * - a controller that never calls `forget` keeps every key's failure count forever (and its next
 *   failure waits the longer for it).
 *
 * @upstream kubernetes/client-go util/workqueue/rate_limiting_queue.go (TypedRateLimitingInterface, rateLimitingType, AddRateLimited, Forget, NumRequeues)
 * @chapter 04-informers
 */

import { type Clock, realClock } from "../clock.ts";
import { newTypedDelayingQueueWithConfig, type TypedDelayingInterface } from "./delaying-queue.ts";
import type { GetResult } from "./queue.ts";
import type { TypedRateLimiter } from "./rate-limiters.ts";

/** client-go's TypedRateLimitingInterface. */
export interface TypedRateLimitingInterface<T> extends TypedDelayingInterface<T> {
  /** Adds `item` once the rate limiter says it may be retried. */
  addRateLimited(item: T): void;
  /** Tells the rate limiter `item` is done being retried (success, or given up). Still call done. */
  forget(item: T): void;
  /** How many times `item` has been requeued through addRateLimited since its last forget. */
  numRequeues(item: T): number;
}

export interface TypedRateLimitingQueueConfig<T> {
  name?: string;
  /** Defaults to the real clock; tests pass a FakeClock. */
  clock?: Clock;
  /** The delaying queue underneath; a new one on `clock` when absent. */
  delayingQueue?: TypedDelayingInterface<T>;
}

/** NewTypedRateLimitingQueue. Remember to call forget, or failures are tracked forever. */
export function newTypedRateLimitingQueue<T>(
  rateLimiter: TypedRateLimiter<T>,
): TypedRateLimitingInterface<T> {
  return newTypedRateLimitingQueueWithConfig(rateLimiter, {});
}

/** NewTypedRateLimitingQueueWithConfig. */
export function newTypedRateLimitingQueueWithConfig<T>(
  rateLimiter: TypedRateLimiter<T>,
  config: TypedRateLimitingQueueConfig<T>,
): TypedRateLimitingInterface<T> {
  const delaying =
    config.delayingQueue ??
    newTypedDelayingQueueWithConfig<T>({ name: config.name, clock: config.clock ?? realClock });
  return new RateLimitingType<T>(delaying, rateLimiter);
}

// #region rate-limited
export class RateLimitingType<T> implements TypedRateLimitingInterface<T> {
  constructor(
    private readonly delaying: TypedDelayingInterface<T>,
    readonly rateLimiter: TypedRateLimiter<T>,
  ) {}

  addRateLimited(item: T): void {
    this.delaying.addAfter(item, this.rateLimiter.when(item));
  }

  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
  // #endregion rate-limited

  // The delaying queue, passed through.
  addAfter(item: T, delayMs: number): void {
    this.delaying.addAfter(item, delayMs);
  }
  add(item: T): void {
    this.delaying.add(item);
  }
  len(): number {
    return this.delaying.len();
  }
  get(): Promise<GetResult<T>> {
    return this.delaying.get();
  }
  done(item: T): void {
    this.delaying.done(item);
  }
  shutDown(): void {
    this.delaying.shutDown();
  }
  shutDownWithDrain(): Promise<void> {
    return this.delaying.shutDownWithDrain();
  }
  shuttingDown(): boolean {
    return this.delaying.shuttingDown();
  }
}
