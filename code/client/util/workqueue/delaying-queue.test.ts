import { describe, expect, it } from "vitest";
import { FakeClock } from "../clock.ts";
import { type DelayingType, newTypedDelayingQueueWithConfig } from "./delaying-queue.ts";

function setup() {
  const clock = new FakeClock(1_000_000);
  const q = newTypedDelayingQueueWithConfig<string>({ clock }) as DelayingType<string>;
  return { clock, q };
}

/** Takes every item queued now, in order, marking each done. */
async function drainNow(q: DelayingType<string>): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const r = await q.get();
    if (r.shutdown) break;
    out.push(r.item);
    q.done(r.item);
  }
  return out;
}

describe("addAfter", () => {
  it("adds the item when its time comes, not before", async () => {
    const { clock, q } = setup();
    q.addAfter("a", 50);
    expect(q.len()).toBe(0);
    clock.step(49);
    expect(q.len()).toBe(0);
    clock.step(1);
    expect(await drainNow(q)).toEqual(["a"]);
    expect(q.waitingLen()).toBe(0);
    expect(clock.hasWaiters()).toBe(false);
  });

  it("adds at once when the delay is zero or negative", () => {
    const { clock, q } = setup();
    q.addAfter("a", 0);
    q.addAfter("b", -5);
    expect(q.len()).toBe(2);
    expect(clock.hasWaiters()).toBe(false);
  });

  it("releases items in ready-time order, whatever order they were asked in", async () => {
    const { clock, q } = setup();
    q.addAfter("c", 30);
    q.addAfter("a", 10);
    q.addAfter("d", 40);
    q.addAfter("b", 20);
    clock.step(25);
    expect(await drainNow(q)).toEqual(["a", "b"]);
    clock.step(100);
    expect(await drainNow(q)).toEqual(["c", "d"]);
  });

  it("moves a waiting item earlier when it is asked for sooner", async () => {
    const { clock, q } = setup();
    q.addAfter("a", 100);
    q.addAfter("b", 50);
    q.addAfter("a", 10);
    clock.step(10);
    expect(await drainNow(q)).toEqual(["a"]);
    clock.step(90);
    expect(await drainNow(q)).toEqual(["b"]);
    expect(q.waitingLen()).toBe(0);
  });

  it("never moves a waiting item later: the earlier ask wins", async () => {
    const { clock, q } = setup();
    q.addAfter("a", 10);
    q.addAfter("a", 100);
    expect(q.waitingLen()).toBe(1);
    clock.step(10);
    expect(await drainNow(q)).toEqual(["a"]);
    clock.step(1000);
    expect(await drainNow(q)).toEqual([]);
  });

  it("keeps the queue's rules: a ready item being processed is queued again on done", async () => {
    const { clock, q } = setup();
    q.add("a");
    const r = await q.get();
    expect(r.item).toBe("a");
    q.addAfter("a", 5);
    clock.step(5);
    expect(q.len()).toBe(0); // held by a worker
    q.done("a");
    expect(await drainNow(q)).toEqual(["a"]);
  });

  it("a plain add does not cancel a waiting entry (it still fires)", async () => {
    const { clock, q } = setup();
    q.addAfter("a", 100);
    q.add("a");
    expect(await drainNow(q)).toEqual(["a"]);
    clock.step(100);
    expect(await drainNow(q)).toEqual(["a"]);
  });

  it("drops what waits on shutdown and arms no timer after it", async () => {
    const { clock, q } = setup();
    q.addAfter("a", 10);
    q.shutDown();
    expect(clock.hasWaiters()).toBe(false);
    q.addAfter("b", 10);
    clock.step(100);
    expect(q.len()).toBe(0);
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  it("shutDownWithDrain also stops the waiting items", async () => {
    const { clock, q } = setup();
    q.addAfter("a", 10);
    await q.shutDownWithDrain();
    expect(clock.hasWaiters()).toBe(false);
    expect(q.waitingLen()).toBe(0);
  });

  it("keeps many items in order (the heap)", async () => {
    const { clock, q } = setup();
    const delays = [37, 5, 91, 12, 64, 3, 77, 28, 50, 19, 88, 42];
    for (const [i, d] of delays.entries()) q.addAfter(`k${i}`, d);
    const out: string[] = [];
    for (let t = 1; t <= 100; t++) {
      clock.step(1);
      out.push(...(await drainNow(q)));
    }
    const expected = delays
      .map((d, i) => ({ d, k: `k${i}` }))
      .sort((a, b) => a.d - b.d)
      .map((x) => x.k);
    expect(out).toEqual(expected);
  });
});
