import { describe, expect, it, vi } from "vitest";
import { FakeClock } from "../clock.ts";
import { jitter, jitterUntil } from "./jitter-until.ts";

describe("jitter", () => {
  it("adds up to maxFactor × duration (maxFactor ≤ 0 means 1)", () => {
    expect(jitter(10_000, 0.04, () => 0)).toBe(10_000);
    expect(jitter(10_000, 0.04, () => 0.5)).toBe(10_200);
    expect(jitter(10_000, 0, () => 0.5)).toBe(15_000);
  });
});

describe("jitterUntil", () => {
  it("runs at once, then every period counted from the end of each run (sliding), until aborted", async () => {
    const clock = new FakeClock(0);
    const abort = new AbortController();
    const starts: number[] = [];
    const done = jitterUntil(
      async () => {
        starts.push(clock.now());
        clock.step(300); // the run itself takes 300 ms
      },
      1000,
      0.1,
      true,
      { clock, signal: abort.signal, random: () => 0.5 },
    );
    for (let i = 0; i < 3; i++) {
      await vi.waitFor(() => expect(clock.hasWaiters()).toBe(true));
      clock.setTime(clock.nextDue() as number);
    }
    await vi.waitFor(() => expect(starts).toHaveLength(4));
    // Each wait is 1000 × (1 + 0.5 × 0.1) = 1050 ms after the previous run ended.
    expect(starts).toEqual([0, 1350, 2700, 4050]);
    await vi.waitFor(() => expect(clock.hasWaiters()).toBe(true));
    abort.abort();
    await done;
    expect(clock.hasWaiters()).toBe(false);
  });

  it("not sliding, the period includes the run", async () => {
    const clock = new FakeClock(0);
    const abort = new AbortController();
    const starts: number[] = [];
    const done = jitterUntil(
      () => {
        starts.push(clock.now());
        clock.step(300);
      },
      1000,
      0,
      false,
      { clock, signal: abort.signal },
    );
    for (let i = 0; i < 2; i++) {
      await vi.waitFor(() => expect(clock.hasWaiters()).toBe(true));
      clock.setTime(clock.nextDue() as number);
    }
    await vi.waitFor(() => expect(starts).toHaveLength(3));
    expect(starts).toEqual([0, 1000, 2000]);
    abort.abort();
    await done;
  });
});
