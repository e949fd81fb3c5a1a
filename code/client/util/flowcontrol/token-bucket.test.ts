import { describe, expect, it } from "vitest";
import { FakeClock } from "../clock.ts";
import { TokenBucket } from "./token-bucket.ts";

describe("TokenBucket", () => {
  it("starts full: burst tokens at once, then one per 1/qps seconds", () => {
    const clock = new FakeClock();
    const b = new TokenBucket(5, 10, clock);
    for (let i = 0; i < 10; i++) expect(b.tryAccept()).toBe(true);
    expect(b.tryAccept()).toBe(false);
    clock.step(199);
    expect(b.tryAccept()).toBe(false);
    clock.step(1);
    expect(b.tryAccept()).toBe(true);
  });

  it("reserve queues callers behind each other (first come, first served)", () => {
    const clock = new FakeClock();
    const b = new TokenBucket(10, 1, clock);
    expect(b.reserve()).toBe(0);
    expect(b.reserve()).toBeCloseTo(100);
    expect(b.reserve()).toBeCloseTo(200);
    clock.step(1000);
    // Three tokens were owed; after a second at 10 qps the bucket is full again (capped at burst).
    expect(b.reserve()).toBe(0);
    expect(b.tryAccept()).toBe(false);
  });

  it("never hands out more than burst + qps*t over a window", () => {
    const clock = new FakeClock();
    const b = new TokenBucket(7, 3, clock);
    let taken = 0;
    for (let ms = 0; ms <= 2000; ms += 13) {
      while (b.tryAccept()) taken++;
      clock.step(13);
    }
    expect(taken).toBeLessThanOrEqual(3 + 7 * 2.013);
    expect(taken).toBeGreaterThanOrEqual(3 + 7 * 2 - 1);
  });

  it("accept waits on the clock", async () => {
    const clock = new FakeClock();
    const b = new TokenBucket(2, 1, clock);
    await b.accept();
    let done = false;
    const p = b.accept().then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    clock.step(500);
    await p;
    expect(done).toBe(true);
  });

  it("refuses a zero qps or burst with a clear error", () => {
    expect(() => new TokenBucket(0, 1)).toThrow(/qps > 0/);
    expect(() => new TokenBucket(1, 0)).toThrow(/burst >= 1/);
  });
});
