import { describe, expect, it } from "vitest";
import { FakeClock } from "../clock.ts";
import { TokenBucket } from "../flowcontrol/token-bucket.ts";
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  defaultItemBasedRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  WithMaxWaitRateLimiter,
} from "./rate-limiters.ts";
import { newTypedRateLimitingQueueWithConfig } from "./rate-limiting-queue.ts";

const times = (n: number, f: () => number) => Array.from({ length: n }, f);

describe("ItemExponentialFailureRateLimiter", () => {
  it("doubles from the base delay, per item, and counts requeues", () => {
    const r = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    expect(times(5, () => r.when("one"))).toEqual([1, 2, 4, 8, 16]);
    expect(r.numRequeues("one")).toBe(5);
    expect(times(2, () => r.when("two"))).toEqual([1, 2]);
    expect(r.numRequeues("two")).toBe(2);
  });

  it("starts over after forget", () => {
    const r = new ItemExponentialFailureRateLimiter<string>(1, 1000);
    times(5, () => r.when("one"));
    r.forget("one");
    expect(r.numRequeues("one")).toBe(0);
    expect(r.when("one")).toBe(1);
  });

  it("stops at the maximum", () => {
    const r = new ItemExponentialFailureRateLimiter<string>(1, 20);
    expect(times(7, () => r.when("one"))).toEqual([1, 2, 4, 8, 16, 20, 20]);
  });

  it("returns the maximum when the backoff would overflow, however many failures", () => {
    const r = new ItemExponentialFailureRateLimiter<string>(1, 1000_000);
    const all = times(1200, () => r.when("one"));
    expect(all.slice(-200).every((d) => d === 1000_000)).toBe(true);
    expect(all.every((d) => d >= 0 && d <= 1000_000)).toBe(true);
    // Past int64 nanoseconds — and past a double (2^1100 is Infinity) — still the maximum.
    const huge = new ItemExponentialFailureRateLimiter<string>(1, Number.MAX_VALUE);
    for (let i = 0; i < 63; i++) huge.when("x");
    expect(huge.when("x")).toBe(Number.MAX_VALUE);
  });

  it("DefaultItemBasedRateLimiter is 1 ms doubling to 1000 s", () => {
    const r = defaultItemBasedRateLimiter<string>();
    expect(times(3, () => r.when("a"))).toEqual([1, 2, 4]);
  });
});

describe("ItemFastSlowRateLimiter", () => {
  it("waits fast for the first attempts, slow after, per item, and starts over after forget", () => {
    const r = new ItemFastSlowRateLimiter<string>(5, 10_000, 3);
    expect(times(5, () => r.when("one"))).toEqual([5, 5, 5, 10_000, 10_000]);
    expect(r.numRequeues("one")).toBe(5);
    expect(r.when("two")).toBe(5);
    r.forget("one");
    expect(r.numRequeues("one")).toBe(0);
    expect(r.when("one")).toBe(5);
  });
});

describe("BucketRateLimiter", () => {
  it("lets a burst through, then spaces retries at the rate, whatever the item", () => {
    const clock = new FakeClock();
    const r = new BucketRateLimiter<string>(new TokenBucket(10, 100, clock));
    for (let i = 0; i < 100; i++) expect(r.when(`k${i}`)).toBe(0);
    expect(times(3, () => r.when("any"))).toEqual([100, 200, 300]);
    expect(r.numRequeues("any")).toBe(0);
    r.forget("any"); // does nothing: the bucket has no per-item state
    expect(r.when("any")).toBe(400);
  });

  it("refills at the rate as time passes", () => {
    const clock = new FakeClock();
    const r = new BucketRateLimiter<string>(new TokenBucket(10, 100, clock));
    for (let i = 0; i < 100; i++) r.when("x");
    clock.step(1000); // ten tokens back
    expect(times(11, () => r.when("x"))).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100]);
  });
});

describe("MaxOfRateLimiter", () => {
  it("returns the longest wait of its limiters, counting the failure in each", () => {
    const r = new MaxOfRateLimiter<string>(
      new ItemFastSlowRateLimiter<string>(5, 3000, 3),
      new ItemExponentialFailureRateLimiter<string>(1, 1000),
    );
    expect(times(5, () => r.when("one"))).toEqual([5, 5, 5, 3000, 3000]);
    expect(r.numRequeues("one")).toBe(5);
    r.forget("one");
    expect(r.numRequeues("one")).toBe(0);
    expect(r.when("one")).toBe(5);
  });
});

describe("WithMaxWaitRateLimiter", () => {
  it("caps the wrapped limiter's delay", () => {
    const r = new WithMaxWaitRateLimiter<string>(new ItemExponentialFailureRateLimiter<string>(1, 1000), 5);
    expect(times(5, () => r.when("a"))).toEqual([1, 2, 4, 5, 5]);
    expect(r.numRequeues("a")).toBe(5);
  });
});

describe("DefaultControllerRateLimiter", () => {
  it("is 5 ms doubling per item, up to 1000 s", () => {
    const r = defaultControllerRateLimiter<string>(new FakeClock());
    expect(times(6, () => r.when("a"))).toEqual([5, 10, 20, 40, 80, 160]);
    // 5 ms · 2^17 = 655.36 s, 2^18 would be 1310.72 s: the cap
    const rest = times(20, () => r.when("a"));
    expect(rest[11]).toBe(655_360);
    expect(rest[12]).toBe(1000_000);
    expect(rest.at(-1)).toBe(1000_000);
    expect(r.numRequeues("a")).toBe(26);
    r.forget("a");
    expect(r.when("a")).toBe(5);
  });

  it("holds all items to 10 a second after a burst of 100", () => {
    const r = defaultControllerRateLimiter<string>(new FakeClock());
    // 100 different keys each failing once: 5 ms each, the burst absorbs them
    for (let i = 0; i < 100; i++) expect(r.when(`k${i}`)).toBe(5);
    // the 101st… wait for the bucket, longer than their own 5 ms
    expect(times(3, () => r.when(`late`))).toEqual([100, 200, 300]);
  });
});

describe("the rate-limiting queue", () => {
  it("adds a failed item after the limiter's delay, and counts and forgets", async () => {
    const clock = new FakeClock();
    const q = newTypedRateLimitingQueueWithConfig(new ItemExponentialFailureRateLimiter<string>(5, 1000), {
      clock,
    });
    q.addRateLimited("a");
    expect(q.numRequeues("a")).toBe(1);
    clock.step(4);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    const r = await q.get();
    expect(r.item).toBe("a");
    q.addRateLimited("a"); // second failure: 10 ms
    q.done("a");
    clock.step(9);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(q.len()).toBe(1);
    expect(q.numRequeues("a")).toBe(2);
    q.forget("a");
    expect(q.numRequeues("a")).toBe(0);
    q.addAfter("b", 3);
    clock.step(3);
    expect(q.len()).toBe(2);
    q.shutDown();
    expect(q.shuttingDown()).toBe(true);
  });
});
