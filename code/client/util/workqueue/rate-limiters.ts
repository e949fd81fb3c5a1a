/**
 * Rate limiters — how long a key that failed must wait before it is tried again.
 * Mirrors kubernetes/client-go's util/workqueue/default_rate_limiters.go.
 *
 * Solves:
 * - a key whose reconcile keeps failing (a missing secret, a webhook that is down) must not spin:
 *   each failure doubles its wait (5 ms, 10 ms, 20 ms, … up to 1000 s), and `forget` starts it over
 *   once it succeeds;
 * - many keys failing at once (the API server restarts) must not stampede it: an overall token
 *   bucket (10 per second, bursts of 100) spaces out all retries together;
 * - the two combine by taking the longer wait (MaxOfRateLimiter) — DefaultControllerRateLimiter.
 *
 * Invariants:
 * - `when(item)` counts one failure of `item` (for the per-item limiters) and returns a delay in
 *   milliseconds, never negative, never above the limiter's maximum;
 * - `numRequeues(item)` is the number of `when` calls since the last `forget(item)`;
 * - the bucket limiter keeps no per-item state: its `forget` and `numRequeues` do nothing.
 *
 * @upstream kubernetes/client-go util/workqueue/default_rate_limiters.go (TypedRateLimiter, DefaultTypedControllerRateLimiter, TypedBucketRateLimiter, TypedItemExponentialFailureRateLimiter, TypedItemFastSlowRateLimiter, TypedMaxOfRateLimiter, TypedWithMaxWaitRateLimiter)
 * @chapter 04-informers
 */

import type { Clock } from "../clock.ts";
import { TokenBucket } from "../flowcontrol/token-bucket.ts";

/** Decides how long an item waits before it is added again (client-go's TypedRateLimiter). */
export interface TypedRateLimiter<T> {
  /** Records one more failure of `item` and returns how long it should wait, in milliseconds. */
  when(item: T): number;
  /** Stops tracking `item` — it succeeded, or the caller gave up on it. */
  forget(item: T): void;
  /** How many failures `item` has had since it was last forgotten. */
  numRequeues(item: T): number;
}

// Go's time.Duration is an int64 of nanoseconds; a backoff that would overflow it is the maximum.
const maxDurationMs = 2 ** 63 / 1e6;

// #region exponential
/**
 * baseDelay · 2^failures, capped at maxDelay. How many failures to allow, and when to stop
 * tracking an item, is the caller's business (it calls `forget`).
 */
export class ItemExponentialFailureRateLimiter<T> implements TypedRateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    readonly baseDelayMs: number,
    readonly maxDelayMs: number,
  ) {}

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    // After ~60 failures 5 ms·2^exp leaves int64 nanoseconds (and after ~1070, a double): cap
    // before converting, so a key that fails forever waits maxDelay, not a wrapped-around 0.
    const backoff = this.baseDelayMs * 2 ** exp;
    if (!(backoff <= maxDurationMs)) return this.maxDelayMs;
    // Durations are whole nanoseconds upstream; truncate the same way.
    const calculated = Math.trunc(backoff * 1e6) / 1e6;
    return Math.min(calculated, this.maxDelayMs);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }
}
// #endregion exponential

/** NewTypedItemExponentialFailureRateLimiter. */
export function newItemExponentialFailureRateLimiter<T>(
  baseDelayMs: number,
  maxDelayMs: number,
): ItemExponentialFailureRateLimiter<T> {
  return new ItemExponentialFailureRateLimiter<T>(baseDelayMs, maxDelayMs);
}

/** DefaultTypedItemBasedRateLimiter — per item only: 1 ms doubling up to 1000 s. */
export function defaultItemBasedRateLimiter<T>(): TypedRateLimiter<T> {
  return new ItemExponentialFailureRateLimiter<T>(1, 1000_000);
}

/** A few quick retries, then slow ones: the first `maxFastAttempts` failures wait fastDelay. */
export class ItemFastSlowRateLimiter<T> implements TypedRateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    readonly fastDelayMs: number,
    readonly slowDelayMs: number,
    readonly maxFastAttempts: number,
  ) {}

  when(item: T): number {
    const n = (this.failures.get(item) ?? 0) + 1;
    this.failures.set(item, n);
    return n <= this.maxFastAttempts ? this.fastDelayMs : this.slowDelayMs;
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }
}

/** NewTypedItemFastSlowRateLimiter. */
export function newItemFastSlowRateLimiter<T>(
  fastDelayMs: number,
  slowDelayMs: number,
  maxFastAttempts: number,
): ItemFastSlowRateLimiter<T> {
  return new ItemFastSlowRateLimiter<T>(fastDelayMs, slowDelayMs, maxFastAttempts);
}

// #region bucket
/**
 * One token bucket for all items: each `when` takes a token and waits as long as the bucket
 * says (rate.Limiter.Reserve().Delay() upstream). It limits the retry rate, not any one item.
 */
export class BucketRateLimiter<T> implements TypedRateLimiter<T> {
  constructor(readonly limiter: TokenBucket) {}

  when(_item: T): number {
    return this.limiter.reserve();
  }

  numRequeues(_item: T): number {
    return 0;
  }

  forget(_item: T): void {}
}
// #endregion bucket

// #region max-of
/**
 * The worst case of several limiters. Every limiter is asked on each `when` (so each counts the
 * failure and the bucket spends a token), and the longest wait is returned. With a bucket inside,
 * the burst can seem exceeded: an item that another limiter delayed longer spent its token early.
 */
export class MaxOfRateLimiter<T> implements TypedRateLimiter<T> {
  readonly limiters: TypedRateLimiter<T>[];

  constructor(...limiters: TypedRateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    let ret = 0;
    for (const limiter of this.limiters) ret = Math.max(ret, limiter.when(item));
    return ret;
  }

  numRequeues(item: T): number {
    let ret = 0;
    for (const limiter of this.limiters) ret = Math.max(ret, limiter.numRequeues(item));
    return ret;
  }

  forget(item: T): void {
    for (const limiter of this.limiters) limiter.forget(item);
  }
}
// #endregion max-of

/** NewTypedMaxOfRateLimiter. */
export function newMaxOfRateLimiter<T>(...limiters: TypedRateLimiter<T>[]): MaxOfRateLimiter<T> {
  return new MaxOfRateLimiter<T>(...limiters);
}

/** Caps another limiter's delay at maxDelay (TypedWithMaxWaitRateLimiter). */
export class WithMaxWaitRateLimiter<T> implements TypedRateLimiter<T> {
  constructor(
    readonly limiter: TypedRateLimiter<T>,
    readonly maxDelayMs: number,
  ) {}

  when(item: T): number {
    return Math.min(this.limiter.when(item), this.maxDelayMs);
  }

  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }

  forget(item: T): void {
    this.limiter.forget(item);
  }
}

// #region default-controller
/**
 * DefaultTypedControllerRateLimiter — what nearly every controller uses: per item 5 ms doubling to
 * 1000 s, and overall 10 retries a second with bursts of 100, whichever waits longer. `clock` is for
 * tests; upstream's bucket always reads the wall clock.
 */
export function defaultControllerRateLimiter<T>(clock?: Clock): TypedRateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1000_000),
    new BucketRateLimiter<T>(new TokenBucket(10, 100, clock)),
  );
}
// #endregion default-controller
