import { describe, expect, it } from "vitest";
import { FakeClock } from "../clock.ts";
import { Backoff, newBackOff } from "./backoff.ts";

const s = 1000;

describe("Backoff", () => {
  it("starts at the initial duration and doubles up to the cap", () => {
    const clock = new FakeClock(0);
    const b = newBackOff(10 * s, 300 * s, clock);
    expect(b.get("k")).toBe(0);
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      b.next("k", clock.now());
      seen.push(b.get("k") / s);
      clock.step(1 * s);
    }
    expect(seen).toEqual([10, 20, 40, 80, 160, 300, 300, 300]);
  });

  it("keeps one backoff per key", () => {
    const clock = new FakeClock(0);
    const b = newBackOff(1 * s, 60 * s, clock);
    b.next("a", 0);
    b.next("a", 0);
    b.next("b", 0);
    expect([b.get("a"), b.get("b")]).toEqual([2 * s, 1 * s]);
  });

  it("is in backoff for strictly less than the backoff after the event", () => {
    const clock = new FakeClock(100 * s);
    const b = newBackOff(10 * s, 300 * s, clock);
    expect(b.isInBackOffSince("k", clock.now())).toBe(false); // no entry yet
    b.next("k", clock.now());
    const failedAt = clock.now();
    clock.step(10 * s - 1);
    expect(b.isInBackOffSince("k", failedAt)).toBe(true);
    clock.step(1);
    expect(b.isInBackOffSince("k", failedAt)).toBe(false);
  });

  it("starts over when the event comes more than 2 × max after the last update (the default)", () => {
    const clock = new FakeClock(0);
    const b = newBackOff(10 * s, 60 * s, clock);
    for (let i = 0; i < 4; i++) b.next("k", 0);
    expect(b.get("k")).toBe(60 * s);
    // Exactly 2 × max is not enough: the rule is strictly more.
    b.next("k", 120 * s);
    expect(b.get("k")).toBe(60 * s);
    const last = clock.now();
    b.next("k", last + 120 * s + 1);
    expect(b.get("k")).toBe(10 * s);
  });

  it("an expired entry is not in backoff, and IsInBackOffSinceUpdate measures from the last update", () => {
    const clock = new FakeClock(0);
    const b = newBackOff(10 * s, 60 * s, clock);
    b.next("k", 0);
    expect(b.isInBackOffSinceUpdate("k", 9 * s)).toBe(true);
    expect(b.isInBackOffSinceUpdate("k", 10 * s)).toBe(false);
    clock.step(200 * s);
    expect(b.isInBackOffSince("k", 130 * s)).toBe(false); // 130 s after the update: expired
  });

  it("uses HasExpiredFunc instead of 2 × max when it is set", () => {
    const clock = new FakeClock(0);
    const b = newBackOff(10 * s, 300 * s, clock);
    b.hasExpiredFunc = (event, last) => event - last > 30 * s;
    b.next("k", 0);
    b.next("k", 0);
    expect(b.get("k")).toBe(20 * s);
    b.next("k", 31 * s);
    expect(b.get("k")).toBe(10 * s);
  });

  it("adds jitter of up to maxJitterFactor × the backoff before capping", () => {
    const clock = new FakeClock(0);
    const b = new Backoff(10 * s, 35 * s, clock, 0.5, () => 0.5);
    b.next("k", 0);
    expect(b.get("k")).toBe(12.5 * s); // 10 + 0.5 × 0.5 × 10
    b.next("k", 0);
    expect(b.get("k")).toBe(28.125 * s); // 25 + 0.25 × 12.5
    b.next("k", 0);
    expect(b.get("k")).toBe(35 * s);
  });

  it("GC drops only expired entries; Reset forgets a key", () => {
    const clock = new FakeClock(0);
    const b = newBackOff(1 * s, 10 * s, clock);
    b.next("old", 0);
    clock.step(15 * s);
    b.next("new", clock.now());
    clock.step(6 * s); // old: 21 s since its update (> 20 s); new: 6 s
    b.gc();
    expect([b.get("old"), b.get("new")]).toEqual([0, 1 * s]);
    b.reset("new");
    expect(b.get("new")).toBe(0);
  });
});
