/**
 * Token bucket — the rate limiter every kubernetes/client-go client and the workqueue's overall limiter sit on.
 * Mirrors golang.org/x/time/rate's Limiter (which client-go wraps twice): client-go's
 * util/flowcontrol/throttle.go (NewTokenBucketRateLimiter: a REST client's QPS and burst) and
 * util/workqueue/default_rate_limiters.go (BucketRateLimiter: 10 qps, burst 100).
 *
 * Solves:
 * - a controller that relists or retries in a loop must not flood the API server: each request
 *   takes a token; tokens refill at `qps` per second up to `burst`, so a client may burst after a
 *   quiet spell but never sustains more than `qps`.
 *
 * Invariants:
 * - the bucket starts full (`burst` tokens), as rate.NewLimiter does;
 * - `reserve()` always takes a token, letting the count go below zero: the caller is told how long
 *   to wait, and the next caller queues behind it (first come, first served);
 * - `tryAccept()` takes a token only if one is there now, and never waits;
 * - over any window of `t` seconds at most `burst + qps * t` tokens are handed out.
 *
 * @upstream kubernetes/client-go util/flowcontrol/throttle.go (NewTokenBucketRateLimiter, TryAccept, Accept, Wait)
 * @upstream golang/time rate/rate.go (Limiter, Reserve, Reservation.Delay)
 * @chapter 04-informers
 */

import { type Clock, realClock, sleep } from "../clock.ts";

// #region token-bucket
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0) || !(burst >= 1))
      throw new Error(`token bucket needs qps > 0 and burst >= 1, got qps=${qps} burst=${burst}`);
    this.tokens = burst;
    this.last = clock.now();
  }

  /** Takes a token and returns how many milliseconds the caller must wait before using it. */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  /** Takes a token if one is available now; never waits. */
  tryAccept(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Waits for a token (or until `signal` aborts — the token is then still spent, as in Go). */
  async accept(signal?: AbortSignal): Promise<void> {
    const wait = this.reserve();
    if (wait > 0) await sleep(this.clock, wait, signal);
  }

  private refill(): void {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.last) / 1000;
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.qps);
  }
}
// #endregion token-bucket

/** client-go's defaults for a REST client that sets neither QPS nor Burst (rest/config.go). */
export const DefaultQPS = 5;
export const DefaultBurst = 10;

/** flowcontrol.NewTokenBucketRateLimiter — the REST client's limiter. */
export function newTokenBucketRateLimiter(qps: number, burst: number, clock: Clock = realClock): TokenBucket {
  return new TokenBucket(qps, burst, clock);
}
