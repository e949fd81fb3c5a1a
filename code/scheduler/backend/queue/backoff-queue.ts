/**
 * Backoff — how long a pod that failed must wait before its next try, and backoffQ, the heap
 * of pods waiting out that time, soonest first.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/queue/scheduling_queue.go (calculateBackoffDuration, getBackoffTime, isPodBackingoff, podBackoffQ, flushBackoffQCompleted)
 * @chapter 05-scheduler
 *
 * Solves: a pod that was rejected and is moved back by an event may well be rejected again
 * (the event was a node nobody can use). Without a delay, such a pod could be retried on every
 * event, starving the pods behind it; with a per-pod delay that doubles per attempt, a pod that
 * keeps failing costs less and less.
 *
 * Invariants:
 * - the backoff of a pod with n ≥ 1 attempts is min(initial × 2^(n−1), max): 1 s, 2 s, 4 s,
 *   8 s, then 10 s with the defaults; a pod never tried (0 attempts) has none.
 * - the backoff runs from the pod's queue `timestamp` (when it was last put back).
 * - backoffQ's top is the pod whose backoff ends first.
 */
import type { Clock } from "../../../client/util/clock.ts";
import { getPodKey, type QueuedPodInfo } from "../../framework/types.ts";
import { Heap } from "../heap/heap.ts";

export const DefaultPodInitialBackoffDuration = 1_000;
export const DefaultPodMaxBackoffDuration = 10_000;

// #region backoff-duration
export function calculateBackoffDuration(attempts: number, initial: number, max: number): number {
  if (attempts === 0) return 0;
  let d = initial;
  for (let i = 1; i < attempts; i++) {
    // Compare before doubling (upstream's way to avoid overflowing a Duration).
    if (d > max - d) return max;
    d += d;
  }
  return d;
}
// #endregion backoff-duration

export class BackoffQueue {
  private readonly heap: Heap<QueuedPodInfo>;

  constructor(
    private readonly clock: Clock,
    private readonly initial = DefaultPodInitialBackoffDuration,
    private readonly max = DefaultPodMaxBackoffDuration,
  ) {
    this.heap = new Heap(
      (p) => getPodKey(p.podInfo.pod),
      (a, b) => this.backoffTime(a) < this.backoffTime(b),
    );
  }

  backoffDuration(pInfo: QueuedPodInfo): number {
    return calculateBackoffDuration(pInfo.attempts, this.initial, this.max);
  }

  /** getBackoffTime: when the pod's backoff ends, on the queue's clock. */
  backoffTime(pInfo: QueuedPodInfo): number {
    return pInfo.timestamp + this.backoffDuration(pInfo);
  }

  isPodBackingoff(pInfo: QueuedPodInfo): boolean {
    return this.backoffTime(pInfo) > this.clock.now();
  }

  add(pInfo: QueuedPodInfo): void {
    this.heap.addOrUpdate(pInfo);
  }

  delete(pInfo: QueuedPodInfo): boolean {
    return this.heap.delete(pInfo);
  }

  get(pInfo: QueuedPodInfo): QueuedPodInfo | undefined {
    return this.heap.get(pInfo);
  }

  has(pInfo: QueuedPodInfo): boolean {
    return this.heap.has(pInfo);
  }

  /** Pops every pod whose backoff has ended, soonest first. */
  popCompleted(): QueuedPodInfo[] {
    const out: QueuedPodInfo[] = [];
    for (let top = this.heap.peek(); top && !this.isPodBackingoff(top); top = this.heap.peek()) {
      out.push(this.heap.pop()!);
    }
    return out;
  }

  list(): QueuedPodInfo[] {
    return this.heap.list();
  }

  len(): number {
    return this.heap.len();
  }
}
