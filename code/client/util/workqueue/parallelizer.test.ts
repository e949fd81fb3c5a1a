import { describe, expect, it } from "vitest";
import { FakeClock, sleep } from "../clock.ts";
import { parallelizeUntil } from "./parallelizer.ts";

const settle = () => new Promise<void>((r) => setImmediate(r));

describe("parallelizeUntil", () => {
  it("runs every piece once, at most `workers` at a time", async () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    let running = 0;
    let most = 0;
    const all = parallelizeUntil(undefined, 4, 30, async (p) => {
      running++;
      most = Math.max(most, running);
      await sleep(clock, 1 + (p % 3));
      running--;
      seen.push(p);
    });
    for (let i = 0; i < 100 && clock.hasWaiters(); i++) {
      clock.step(1);
      await settle();
    }
    await all;
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(most).toBe(4);
  });

  it("hands out chunks, and never more workers than chunks", async () => {
    const order: number[] = [];
    await parallelizeUntil(undefined, 8, 5, (p) => void order.push(p), { chunkSize: 2 });
    expect(order.sort()).toEqual([0, 1, 2, 3, 4]);
    await parallelizeUntil(undefined, 3, 0, () => {
      throw new Error("no pieces, no calls");
    });
  });

  it("starts no piece after the signal aborts", async () => {
    const ac = new AbortController();
    const seen: number[] = [];
    await parallelizeUntil(ac.signal, 2, 100, (p) => {
      seen.push(p);
      if (seen.length === 5) ac.abort();
    });
    expect(seen.length).toBeGreaterThanOrEqual(5);
    expect(seen.length).toBeLessThanOrEqual(6); // the other worker may have been mid-piece
  });
});
