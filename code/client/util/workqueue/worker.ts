/**
 * Workers — the loop every controller runs on its queue: get a key, sync it, forget or requeue
 * it, done; N of them side by side until the queue shuts down.
 *
 * Solves:
 * - every controller in the course writes the same few lines upstream writes in each controller
 *   (`processNextWorkItem`, `handleErr`, `go wait.UntilWithContext(ctx, c.worker, time.Second)`);
 *   getting `done` or `forget` wrong there loses keys or keeps failure counts forever, so it is
 *   written once here, with the upstream names.
 *
 * Invariants:
 * - every key a worker gets is given back with `done`, whatever `sync` does (throws included);
 * - a sync that resolves is followed by `forget` (its backoff starts over);
 * - a sync that throws is requeued with `addRateLimited`, unless the key has been requeued
 *   `maxRetries` times already: then it is forgotten and dropped (`onError` is told either way);
 * - a worker stops only when `get` answers shutdown; `runWorkers` resolves when all have stopped.
 *
 * @upstream kubernetes/kubernetes pkg/controller/deployment/deployment_controller.go (worker, processNextWorkItem, handleErr, maxRetries)
 * @upstream kubernetes/apimachinery pkg/util/wait/backoff.go (UntilWithContext)
 * @chapter 04-informers
 */

import type { TypedRateLimitingInterface } from "./rate-limiting-queue.ts";

/** Reconciles one key; throws (or rejects) to have it retried later. */
export type SyncFunc<T> = (item: T) => Promise<void> | void;

export interface WorkerOptions<T> {
  /** Requeues allowed before a failing key is dropped; unlimited when absent. */
  maxRetries?: number;
  /** Told of every failed sync, and whether the key was dropped. */
  onError?: (item: T, err: unknown, dropped: boolean) => void;
}

// #region process-next-work-item
/** Takes one key and handles it; false once the queue has shut down (the worker should stop). */
export async function processNextWorkItem<T>(
  queue: TypedRateLimitingInterface<T>,
  sync: SyncFunc<T>,
  opts: WorkerOptions<T> = {},
): Promise<boolean> {
  const got = await queue.get();
  if (got.shutdown) return false;
  const key = got.item;
  // done in finally: a key never given back stays in `processing` and is never handed out again.
  try {
    await sync(key);
    queue.forget(key);
  } catch (err) {
    // handleErr: back off and retry, or give up after maxRetries.
    const dropped = opts.maxRetries !== undefined && queue.numRequeues(key) >= opts.maxRetries;
    if (dropped) queue.forget(key);
    else queue.addRateLimited(key);
    opts.onError?.(key, err, dropped);
  } finally {
    queue.done(key);
  }
  return true;
}
// #endregion process-next-work-item

// #region run-workers
/**
 * Runs `workers` loops of processNextWorkItem. Aborting `signal` shuts the queue down; the returned
 * promise resolves once every worker has stopped (each finishes the key it holds first).
 */
export async function runWorkers<T>(
  queue: TypedRateLimitingInterface<T>,
  workers: number,
  sync: SyncFunc<T>,
  signal?: AbortSignal,
  opts: WorkerOptions<T> = {},
): Promise<void> {
  const stop = () => queue.shutDown();
  if (signal?.aborted) stop();
  else signal?.addEventListener("abort", stop, { once: true });
  const worker = async () => {
    while (await processNextWorkItem(queue, sync, opts)) {}
  };
  try {
    await Promise.all(Array.from({ length: workers }, worker));
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}
// #endregion run-workers
