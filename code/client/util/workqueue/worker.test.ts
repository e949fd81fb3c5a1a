import { describe, expect, it } from "vitest";
import { FakeClock, sleep } from "../clock.ts";
import { ItemExponentialFailureRateLimiter } from "./rate-limiters.ts";
import { newTypedRateLimitingQueueWithConfig } from "./rate-limiting-queue.ts";
import { processNextWorkItem, runWorkers } from "./worker.ts";

const settle = () => new Promise<void>((r) => setImmediate(r));

function setup() {
  const clock = new FakeClock();
  const q = newTypedRateLimitingQueueWithConfig(new ItemExponentialFailureRateLimiter<string>(5, 1000), {
    clock,
  });
  return { clock, q };
}

/** Steps the fake clock from timer to timer until nothing is left to fire. */
async function runClock(clock: FakeClock): Promise<void> {
  for (;;) {
    await settle();
    const due = clock.nextDue();
    if (due === undefined) return;
    clock.setTime(due);
  }
}

describe("processNextWorkItem", () => {
  it("syncs a key, forgets it on success and marks it done", async () => {
    const { q } = setup();
    q.add("a");
    q.addRateLimited("b");
    q.forget("b");
    q.addRateLimited("a"); // one failure recorded for "a"
    const seen: string[] = [];
    expect(await processNextWorkItem(q, (k) => void seen.push(k))).toBe(true);
    expect(seen).toEqual(["a"]);
    expect(q.numRequeues("a")).toBe(0);
    expect(q.len()).toBe(0);
  });

  it("requeues a failing key with its backoff, and marks it done even so", async () => {
    const { clock, q } = setup();
    q.add("a");
    const errors: unknown[] = [];
    await processNextWorkItem(
      q,
      () => {
        throw new Error("boom");
      },
      { onError: (_k, err, dropped) => errors.push([String(err), dropped]) },
    );
    expect(errors).toEqual([["Error: boom", false]]);
    expect(q.numRequeues("a")).toBe(1);
    expect(q.len()).toBe(0);
    clock.step(5);
    expect(q.len()).toBe(1); // back after 5 ms — and not stuck in processing
  });

  it("drops a key after maxRetries requeues", async () => {
    const { clock, q } = setup();
    q.add("a");
    const drops: boolean[] = [];
    const fail = () => Promise.reject(new Error("no"));
    for (let i = 0; i < 3; i++) {
      await processNextWorkItem(q, fail, { maxRetries: 2, onError: (_k, _e, d) => drops.push(d) });
      clock.step(1000);
    }
    expect(drops).toEqual([false, false, true]);
    expect(q.numRequeues("a")).toBe(0);
    expect(q.len()).toBe(0);
  });

  it("answers false once the queue has shut down", async () => {
    const { q } = setup();
    q.shutDown();
    expect(await processNextWorkItem(q, () => {})).toBe(false);
  });
});

describe("runWorkers", () => {
  it("runs N workers side by side, never two on one key, until the signal aborts", async () => {
    const { clock, q } = setup();
    const ac = new AbortController();
    let running = 0;
    let most = 0;
    let overlapped = false;
    const busy = new Set<string>();
    const synced: string[] = [];
    const done = runWorkers(
      q,
      3,
      async (key) => {
        // (an expect here would throw into the worker, which requeues: record instead)
        if (busy.has(key)) overlapped = true;
        busy.add(key);
        running++;
        most = Math.max(most, running);
        await sleep(clock, 10);
        running--;
        busy.delete(key);
        synced.push(key);
      },
      ac.signal,
    );
    for (const k of ["a", "b", "c", "d", "a"]) q.add(k);
    await settle();
    q.add("a"); // while "a" is being processed: once more after it
    await runClock(clock);
    expect(most).toBe(3);
    expect(overlapped).toBe(false);
    expect(synced.sort()).toEqual(["a", "a", "b", "c", "d"]);
    ac.abort();
    await done;
    expect(q.shuttingDown()).toBe(true);
  });

  it("stops at once for a signal already aborted", async () => {
    const { q } = setup();
    const ac = new AbortController();
    ac.abort();
    await runWorkers(q, 2, () => {}, ac.signal);
    expect(q.shuttingDown()).toBe(true);
  });
});
