/**
 * TimedWorkerQueue — one timer per pod: "delete this pod at fireAt", cancellable until it fires.
 * Mirrors kubernetes/kubernetes pkg/controller/tainteviction/timed_workers.go (TimedWorkerQueue,
 * TimedWorker, createWorker, AddWork, CancelWork, GetWorkerUnsafe) as of v1.32.
 *
 * Solves: a pod that tolerates `unreachable:NoExecute` for 300 s must be deleted 300 s after the
 * taint appeared — unless the taint goes away first. A timer per pod, keyed by namespace/name,
 * is the plainest way to say that; cancelling it is how a recovered node keeps its pods.
 *
 * Invariants:
 * - at most one worker per key: `addWork` of a present key does nothing (so the first deadline
 *   stays — see taint-eviction.ts for why that matters);
 * - work due now (fireAt ≤ createdAt) starts at once and has no timer (its entry is `null`);
 * - a worker that succeeded stays in the map as `null`, so the same pod is not deleted twice;
 *   one that failed is removed, so a later event can schedule it again;
 * - `cancelWork` returns true when the key had a timer (upstream then records the cancellation).
 *
 * @upstream kubernetes/kubernetes pkg/controller/tainteviction/timed_workers.go (WorkArgs, TimedWorker, createWorker, TimedWorkerQueue, CreateWorkerQueue, getWrappedWorkerFunc, AddWork, CancelWork, GetWorkerUnsafe)
 * @chapter 07-kubelet
 */
import type { Clock, Timer } from "../../client/util/clock.ts";

export interface TimedWorker {
  key: string;
  createdAt: number;
  fireAt: number;
  timer: Timer;
}

/** What a fired worker does; a rejection leaves the key free to be scheduled again. */
export type WorkFunc = (key: string, fireAt: number) => Promise<void>;

export class TimedWorkerQueue {
  /** key → its waiting worker, or null once started without a timer / finished successfully. */
  private readonly workers = new Map<string, TimedWorker | null>();
  /** Work that is running now, so a stop can wait for it. */
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly clock: Clock,
    private readonly workFunc: WorkFunc,
    private readonly onError: (key: string, err: unknown) => void = () => {},
  ) {}

  // #region add-work
  /** Runs the work for `key` at `fireAt` (at once if it is not after `createdAt`), unless `key` is queued. */
  addWork(key: string, createdAt: number, fireAt: number): void {
    if (this.workers.has(key)) return; // already scheduled (or done): keep the first deadline
    const delay = fireAt - createdAt;
    if (delay <= 0) {
      this.workers.set(key, null);
      this.fire(key, fireAt);
      return;
    }
    const timer = this.clock.afterFunc(delay, () => this.fire(key, fireAt));
    this.workers.set(key, { key, createdAt, fireAt, timer });
  }
  // #endregion add-work

  private fire(key: string, fireAt: number): void {
    const run = this.workFunc(key, fireAt).then(
      () => {
        // Kept (as null) so that a repeated event cannot delete the pod twice.
        if (this.workers.has(key)) this.workers.set(key, null);
      },
      (err) => {
        this.workers.delete(key);
        this.onError(key, err);
      },
    );
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }

  /** Forgets `key`; true if it had a timer (which is stopped). */
  cancelWork(key: string): boolean {
    if (!this.workers.has(key)) return false;
    const w = this.workers.get(key);
    this.workers.delete(key);
    if (!w) return false;
    w.timer.stop();
    return true;
  }

  /** The waiting worker of `key` (null/undefined: none waiting). */
  getWorkerUnsafe(key: string): TimedWorker | null | undefined {
    return this.workers.get(key);
  }

  /** Stops every timer and waits for the work already running. */
  async cancelAndWait(): Promise<void> {
    for (const w of this.workers.values()) w?.timer.stop();
    this.workers.clear();
    await Promise.allSettled([...this.running]);
  }
}
