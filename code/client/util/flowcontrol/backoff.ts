/**
 * Backoff — a per-key exponential backoff: how long to hold off the next try of something that
 * keeps failing. The kubelet's CrashLoopBackOff is one of these, keyed by container.
 * Mirrors k8s.io/client-go util/flowcontrol/backoff.go.
 *
 * Solves:
 * - a container that crashes as soon as it starts must not be restarted in a tight loop: each
 *   failure doubles the wait before the next try (10 s, 20 s, 40 s … for the kubelet), up to a cap;
 * - a thing that failed once long ago and has been fine since must start again from the short
 *   wait, not from the cap: an entry not bumped for a while "expires" and starts over.
 *
 * Invariants:
 * - an entry's `backoff` is `defaultDuration` when it is created or restarted, and afterwards
 *   never exceeds `maxDuration` (jitter, when configured, is added before the cap);
 * - `next(id, eventTime)` restarts the entry when `hasExpired(eventTime, lastUpdate)`; by default
 *   that is `eventTime - lastUpdate > 2 * maxDuration` (strictly more);
 * - `lastUpdate` is the clock's time of the last `next`, not the event's time: the window is
 *   measured from when the decision was taken;
 * - `isInBackOffSince(id, eventTime)` is false for an unknown or expired entry, otherwise
 *   `now - eventTime < backoff` (strictly less: at exactly `backoff` the wait is over).
 *
 * Times and durations are milliseconds (Go keeps time.Duration in nanoseconds). No locks: one
 * JavaScript thread, where Go needs its RWMutex.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/util/flowcontrol/backoff.go (Backoff, NewBackOff, NewBackOffWithJitter, Next, IsInBackOffSince, IsInBackOffSinceUpdate, GC, HasExpiredFunc)
 * @chapter 07-kubelet
 */

import { type Clock, realClock } from "../clock.ts";

interface BackoffEntry {
  backoff: number;
  lastUpdate: number;
}

/** Decides whether an entry is stale enough to start over (Go's HasExpiredFunc). */
export type HasExpiredFunc = (eventTime: number, lastUpdate: number, maxDuration: number) => boolean;

// #region backoff
export class Backoff {
  /**
   * Replaces the default "2 × maxDuration" expiry; the kubelet sets it to a fixed 600 s so its
   * reset does not move when the cap is configured (KubeletCrashLoopBackOffMax).
   */
  hasExpiredFunc?: HasExpiredFunc;
  private readonly perItemBackoff = new Map<string, BackoffEntry>();

  constructor(
    readonly defaultDuration: number,
    readonly maxDuration: number,
    readonly clock: Clock = realClock,
    /** 0 for none; otherwise each step adds up to `maxJitterFactor × backoff`, drawn from `random`. */
    readonly maxJitterFactor = 0,
    private readonly random: () => number = Math.random,
  ) {}

  /** The current backoff of `id`, or 0 if it has none. */
  get(id: string): number {
    return this.perItemBackoff.get(id)?.backoff ?? 0;
  }

  /** Moves `id` to its next backoff: start over if new or expired, else double, capped. */
  next(id: string, eventTime: number): void {
    let entry = this.perItemBackoff.get(id);
    if (!entry || this.hasExpired(eventTime, entry.lastUpdate)) {
      entry = { backoff: this.defaultDuration, lastUpdate: 0 };
      this.perItemBackoff.set(id, entry);
      entry.backoff += this.jitter(entry.backoff);
    } else {
      const delay = entry.backoff * 2 + this.jitter(entry.backoff);
      entry.backoff = Math.min(delay, this.maxDuration);
    }
    entry.lastUpdate = this.clock.now();
  }

  /** Forgets `id`: its next failure starts from `defaultDuration` again. */
  reset(id: string): void {
    this.perItemBackoff.delete(id);
  }

  /** Whether less than the current backoff has passed since `eventTime` (say, when it failed). */
  isInBackOffSince(id: string, eventTime: number): boolean {
    const entry = this.perItemBackoff.get(id);
    if (!entry || this.hasExpired(eventTime, entry.lastUpdate)) return false;
    return this.clock.now() - eventTime < entry.backoff;
  }

  /** Whether `eventTime` falls within the current backoff after the last `next`. */
  isInBackOffSinceUpdate(id: string, eventTime: number): boolean {
    const entry = this.perItemBackoff.get(id);
    if (!entry || this.hasExpired(eventTime, entry.lastUpdate)) return false;
    return eventTime - entry.lastUpdate < entry.backoff;
  }

  /** Drops expired entries; users call it now and then so that dead keys do not pile up. */
  gc(): void {
    const now = this.clock.now();
    for (const [id, entry] of this.perItemBackoff) {
      if (this.hasExpired(now, entry.lastUpdate)) this.perItemBackoff.delete(id);
    }
  }

  deleteEntry(id: string): void {
    this.perItemBackoff.delete(id);
  }

  private jitter(delay: number): number {
    return this.maxJitterFactor > 0 ? this.random() * this.maxJitterFactor * delay : 0;
  }

  private hasExpired(eventTime: number, lastUpdate: number): boolean {
    if (this.hasExpiredFunc) return this.hasExpiredFunc(eventTime, lastUpdate, this.maxDuration);
    // Fine for twice the longest wait: treat it as stable and start over.
    return eventTime - lastUpdate > this.maxDuration * 2;
  }
}
// #endregion backoff

/** client-go's NewBackOff: no jitter. */
export function newBackOff(initial: number, max: number, clock: Clock = realClock): Backoff {
  return new Backoff(initial, max, clock);
}
