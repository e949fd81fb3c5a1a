/**
 * ExponentialBackoffManager — how long a retry loop waits before its next attempt: doubling from
 * an initial delay up to a cap, with jitter, and back to the initial delay once a run has gone
 * well for long enough.
 * Mirrors apimachinery pkg/util/wait/backoff.go (Backoff.Step, delay, Jitter,
 * NewExponentialBackoffManager), which kubernetes/client-go's reflector uses with 800 ms → 30 s, reset
 * after 2 minutes, factor 2, jitter 1.0.
 *
 * Solves:
 * - a thousand reflectors whose API server restarts must not all relist in the same second, nor
 *   hammer a server that keeps failing: the delay grows, and jitter spreads the herd;
 * - a reflector that failed once an hour ago must not still wait 30 s: after `resetMs` without
 *   a backoff the delay starts over.
 *
 * Invariants:
 * - the n-th consecutive delay's base is min(initial × factor^(n-1), cap); the delay returned is
 *   base + random × jitter × base, so within [base, base × (1 + jitter));
 * - the randomness is injected, so a seeded test sees the same delays every run.
 *
 * @upstream kubernetes/apimachinery pkg/util/wait/backoff.go (Backoff, delay, NewExponentialBackoffManager, exponentialBackoffManagerImpl.getNextBackoff)
 * @upstream kubernetes/apimachinery pkg/util/wait/jitter.go (Jitter)
 * @chapter 04-informers
 */

import type { Clock } from "../clock.ts";

export interface BackoffManager {
  /** The delay before the next attempt, in milliseconds; each call is one more failure. */
  next(): number;
}

export interface ExponentialBackoffOptions {
  initialMs: number;
  capMs: number;
  resetMs: number;
  factor: number;
  jitter: number;
  clock: Clock;
  random?: () => number;
}

// #region backoff
export class ExponentialBackoffManager implements BackoffManager {
  private duration: number;
  private capped = false;
  private lastBackoffStart: number;
  private readonly random: () => number;

  constructor(private readonly o: ExponentialBackoffOptions) {
    this.duration = o.initialMs;
    this.lastBackoffStart = o.clock.now();
    this.random = o.random ?? Math.random;
  }

  next(): number {
    const now = this.o.clock.now();
    // A long quiet spell since the last backoff means the trouble is over: start small again.
    if (now - this.lastBackoffStart > this.o.resetMs) {
      this.duration = this.o.initialMs;
      this.capped = false;
    }
    this.lastBackoffStart = now;
    const base = this.duration;
    if (!this.capped) {
      const grown = base * this.o.factor;
      if (grown > this.o.capMs) {
        this.duration = this.o.capMs;
        this.capped = true;
      } else {
        this.duration = grown;
      }
    }
    return this.o.jitter > 0 ? base + this.random() * this.o.jitter * base : base;
  }
}
// #endregion backoff

/** The reflector's defaults (reflector.go NewReflectorWithOptions): 800 ms → 30 s, reset after 2 min. */
export function reflectorBackoff(clock: Clock, random?: () => number): ExponentialBackoffManager {
  return new ExponentialBackoffManager({
    initialMs: 800,
    capMs: 30_000,
    resetMs: 120_000,
    factor: 2,
    jitter: 1,
    clock,
    random,
  });
}
