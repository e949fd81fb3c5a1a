// Exercise 5.5, graded through the real PriorityQueue on a FakeClock: your function decides how
// long a pod that no node fits stays in backoffQ after an event moves it, attempt after attempt,
// before the queue's 1 s flush hands it back to activeQ.
import { describe, expect, it } from "vitest";
import { BackoffQueue } from "../../../code/scheduler/backend/queue/backoff-queue.ts";
import { NodeAdd } from "../../../code/scheduler/framework/events.ts";
import type { QueuedPodInfo } from "../../../code/scheduler/framework/types.ts";
import { newSim } from "../../../code/scheduler/testing/sim.ts";
import { makeNode, makePod } from "../../../code/scheduler/testing/wrappers.ts";
import { calculateBackoffDuration } from "./backoff.ts";

/** backoffQ with your duration (the queue's defaults: 1 s initial, 10 s max). */
class LearnerBackoffQueue extends BackoffQueue {
  override backoffDuration(pInfo: QueuedPodInfo): number {
    return calculateBackoffDuration(pInfo.attempts, 1_000, 10_000);
  }
}

/**
 * A pod no node fits, retried `attempts` times: each failure parks it, a node event moves it to
 * backoffQ, and the test measures (in FakeClock ms) how long it stays there.
 */
async function backoffs(attempts: number): Promise<number[]> {
  const sim = newSim({
    nodes: [makeNode("small", { allocatable: { cpu: "1", memory: "1Gi", pods: "110" } })],
  });
  (sim.queue as { backoffQ: BackoffQueue }).backoffQ = new LearnerBackoffQueue(sim.clock);
  sim.queue.run();
  const pod = makePod("big", { requests: [{ cpu: "4" }] });
  const out: number[] = [];
  try {
    sim.add(pod);
    for (let i = 0; i < attempts; i++) {
      await sim.drain();
      expect(sim.queue.whereIs(pod)).toBe("Unschedulable");
      sim.queue.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, makeNode("other"));
      let waited = 0;
      // The flush runs every 1 s: the pod is back within a second of its backoff's end.
      while (sim.queue.whereIs(pod) === "Backoff" && waited < 60_000) {
        sim.clock.step(1_000);
        waited += 1_000;
      }
      expect(sim.queue.whereIs(pod)).toBe("Active");
      out.push(waited);
    }
  } finally {
    sim.queue.close();
  }
  return out;
}

describe("calculateBackoffDuration inside the scheduling queue", () => {
  it("keeps a pod 1 s after its first failure, then doubles: 1, 2, 4, 8 s", async () => {
    expect(await backoffs(4)).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it("caps the backoff at 10 s", async () => {
    expect((await backoffs(7)).slice(4)).toEqual([10_000, 10_000, 10_000]);
  });

  it("stays at 10 s for a pod that has failed 40 times (no overflow)", async () => {
    const got = await backoffs(40);
    expect(got.slice(30)).toEqual(new Array(10).fill(10_000));
  });

  it("gives a pod never tried no backoff, and the exact values between the flushes", () => {
    expect(calculateBackoffDuration(0, 1_000, 10_000)).toBe(0);
    expect([1, 2, 3, 4, 5].map((n) => calculateBackoffDuration(n, 300, 2_000))).toEqual([
      300, 600, 1_200, 2_000, 2_000,
    ]);
  });
});
