/**
 * The kubelet's work queue — when each pod is next due for a periodic sync.
 * Mirrors kubernetes/kubernetes pkg/kubelet/util/queue/work_queue.go.
 *
 * Solves: a pod that synced fine is synced again after the resync interval (about a minute); one
 * whose sync failed, after a backoff (about ten seconds); one that changed phase, at once. The pod
 * workers enqueue each pod with its delay when its sync ends, and the sync loop's one-second tick
 * takes the pods that are due.
 *
 * Invariants: one entry per pod (a new enqueue replaces the due time); `getWork` returns and
 * removes exactly the entries due at or before now.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/util/queue/work_queue.go (WorkQueue, basicWorkQueue, GetWork, Enqueue)
 * @chapter 07-kubelet
 */

import type { Clock } from "../../../client/util/clock.ts";

export class WorkQueue {
  private queue = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  getWork(): string[] {
    const now = this.clock.now();
    const due: string[] = [];
    for (const [uid, at] of this.queue) {
      if (at <= now) {
        due.push(uid);
        this.queue.delete(uid);
      }
    }
    return due;
  }

  enqueue(uid: string, delayMs: number): void {
    this.queue.set(uid, this.clock.now() + delayMs);
  }
}

/** wait.Jitter: `d` plus a random part of up to `maxFactor × d`. */
export function jitter(d: number, maxFactor: number, random: () => number = Math.random): number {
  return d + random() * (maxFactor > 0 ? maxFactor : 1) * d;
}
