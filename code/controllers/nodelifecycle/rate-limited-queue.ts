/**
 * RateLimitedTimedQueue — the nodes waiting for their NoExecute taint, handed out no faster than
 * the zone's eviction rate.
 * Mirrors kubernetes/kubernetes pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go
 * (RateLimitedTimedQueue, UniqueQueue, TimedValue, Try, Add, Remove, SwapLimiter).
 *
 * Solves: a network partition can make a hundred nodes look dead at once; tainting them all in
 * one pass would evict every pod of the cluster in the same minute — maybe for nothing, if the
 * partition heals. So nodes queue per zone and leave the queue at `--node-eviction-rate` nodes
 * per second (0.1: one every 10 s), a rate that drops (or stops) when the zone looks unhealthy.
 *
 * Invariants:
 * - a node is in a zone's set at most once; `add` of a present node is refused;
 * - a node processed successfully leaves the queue but stays in the set (it is not queued again
 *   until `remove` — the node became reachable, or its taint disappeared);
 * - `try` takes one token per item it looks at; a rate of 0 hands out nothing;
 * - items are handed out in the order of their processAt (then of arrival).
 *
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go (RateLimitedTimedQueue, TimedValue, UniqueQueue, Try, Add, Remove, SwapLimiter, EvictionRateLimiterBurst)
 * @chapter 07-kubelet
 */
import type { Clock } from "../../client/util/clock.ts";
import { TokenBucket } from "../../client/util/flowcontrol/token-bucket.ts";

/** The token bucket's burst: one node at a time (EvictionRateLimiterBurst). */
export const EvictionRateLimiterBurst = 1;

export interface TimedValue {
  value: string;
  uid: string;
  addedAt: number;
  processAt: number;
}

/** Returns [done, retry after ms]: done removes the item from the queue (it stays in the set). */
export type ActionFunc = (v: TimedValue) => Promise<[boolean, number]> | [boolean, number];

interface Limiter {
  qps: number;
  tryAccept(): boolean;
}

const neverLimiter: Limiter = { qps: 0, tryAccept: () => false };

export class RateLimitedTimedQueue {
  private queue: TimedValue[] = [];
  private readonly set = new Set<string>();
  private limiter: Limiter;

  constructor(
    private readonly clock: Clock,
    qps: number,
  ) {
    this.limiter = this.newLimiter(qps);
  }

  private newLimiter(qps: number): Limiter {
    return qps <= 0 ? neverLimiter : new TokenBucket(qps, EvictionRateLimiterBurst, this.clock);
  }

  // #region try
  /** Hands due items to `fn` while the limiter gives tokens, one at a time. */
  async try(fn: ActionFunc): Promise<void> {
    while (this.queue.length > 0) {
      // A token per look, even at an item not yet due: upstream's order of checks.
      if (!this.limiter.tryAccept()) break;
      const now = this.clock.now();
      const head = this.queue[0];
      if (now < head.processAt) break;
      const [done, waitMs] = await fn(head);
      // Meanwhile the item may have been removed (the node became reachable): leave it out.
      const at = this.queue.indexOf(head);
      if (at < 0) continue;
      this.queue.splice(at, 1);
      if (!done) this.insert({ ...head, processAt: now + waitMs + 1 });
    }
  }
  // #endregion try

  /** Queues `value` unless it is already in the set; true if it was added. */
  add(value: string, uid: string): boolean {
    if (this.set.has(value)) return false;
    const now = this.clock.now();
    this.set.add(value);
    this.insert({ value, uid, addedAt: now, processAt: now });
    return true;
  }

  /** Takes `value` out of the queue and the set; true if it was in the set. */
  remove(value: string): boolean {
    this.queue = this.queue.filter((v) => v.value !== value);
    return this.set.delete(value);
  }

  /** A new rate (SwapLimiter); with burst 1, a limiter that was empty makes the new one empty too. */
  swapLimiter(qps: number): void {
    if (this.limiter.qps === qps) return;
    const next = this.newLimiter(qps);
    if (qps > 0 && !this.limiter.tryAccept()) next.tryAccept();
    this.limiter = next;
  }

  get qps(): number {
    return this.limiter.qps;
  }

  has(value: string): boolean {
    return this.set.has(value);
  }

  private insert(v: TimedValue): void {
    let at = this.queue.findIndex((o) => o.processAt > v.processAt);
    if (at < 0) at = this.queue.length;
    this.queue.splice(at, 0, v);
  }
}
