import { describe, expect, it } from "vitest";
import { newTyped, newTypedWithConfig, type Queue } from "./queue.ts";

/** Lets every pending promise continuation run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** Gets an item that must be there now. */
async function getNow<T>(q: { get(): Promise<{ item: T | undefined; shutdown: boolean }> }): Promise<T> {
  const r = await q.get();
  expect(r.shutdown).toBe(false);
  return r.item as T;
}

describe("the three sets", () => {
  it("hands items out first in, first out", async () => {
    const q = newTyped<string>();
    q.add("a");
    q.add("b");
    q.add("c");
    expect(q.len()).toBe(3);
    expect([await getNow(q), await getNow(q), await getNow(q)]).toEqual(["a", "b", "c"]);
    expect(q.len()).toBe(0);
  });

  it("collapses duplicates: a key added twice before it is taken is processed once", async () => {
    const q = newTyped<string>();
    q.add("a");
    q.add("b");
    q.add("a");
    expect(q.len()).toBe(2);
    expect(await getNow(q)).toBe("a");
    expect(await getNow(q)).toBe("b");
    expect(q.len()).toBe(0);
  });

  it("never hands a key being processed to a second worker", async () => {
    const q = newTyped<string>();
    q.add("a");
    const first = await getNow(q);
    expect(first).toBe("a");
    q.add("a");
    // "a" is dirty again, but a worker holds it: nothing to hand out.
    expect(q.len()).toBe(0);
    let second: string | undefined;
    void q.get().then((r) => {
      second = r.item;
    });
    await settle();
    expect(second).toBeUndefined();
    q.done("a");
    await settle();
    expect(second).toBe("a");
  });

  it("keeps an add made during processing and queues it again on done", async () => {
    const q = newTyped<string>();
    q.add("a");
    await getNow(q);
    q.add("a");
    q.add("a"); // two adds during processing still make one more round
    q.done("a");
    expect(q.len()).toBe(1);
    expect(await getNow(q)).toBe("a");
    q.done("a");
    expect(q.len()).toBe(0);
  });

  it("forgets a key on done when it was not added again", async () => {
    const q = newTyped<string>();
    q.add("a");
    await getNow(q);
    q.done("a");
    expect(q.len()).toBe(0);
    // And a later add is a fresh one.
    q.add("a");
    expect(await getNow(q)).toBe("a");
  });

  it("wakes parked workers in the order they asked", async () => {
    const q = newTyped<string>();
    const got: string[] = [];
    void q.get().then((r) => got.push(`w1:${r.item}`));
    void q.get().then((r) => got.push(`w2:${r.item}`));
    await settle();
    q.add("x");
    q.add("y");
    await settle();
    expect(got).toEqual(["w1:x", "w2:y"]);
  });

  it("touches, not pushes, an item added again while it waits (a pluggable order)", async () => {
    const touched: string[] = [];
    const fifo: string[] = [];
    const order: Queue<string> = {
      touch: (item) => touched.push(item),
      push: (item) => fifo.push(item),
      len: () => fifo.length,
      pop: () => fifo.shift()!,
    };
    const q = newTypedWithConfig<string>({ queue: order });
    q.add("a");
    q.add("a");
    expect(touched).toEqual(["a"]);
    await getNow(q);
    q.add("a"); // during processing: neither touched nor pushed
    expect(touched).toEqual(["a"]);
    expect(fifo).toEqual([]);
  });
});

describe("shutdown", () => {
  it("refuses new items, hands out what is queued, then says shutdown", async () => {
    const q = newTyped<string>();
    q.add("a");
    q.shutDown();
    expect(q.shuttingDown()).toBe(true);
    q.add("b");
    expect(q.len()).toBe(1);
    expect(await q.get()).toEqual({ item: "a", shutdown: false });
    expect(await q.get()).toEqual({ item: undefined, shutdown: true });
  });

  it("releases every parked worker", async () => {
    const q = newTyped<string>();
    const a = q.get();
    const b = q.get();
    q.shutDown();
    expect(await a).toEqual({ item: undefined, shutdown: true });
    expect(await b).toEqual({ item: undefined, shutdown: true });
  });

  it("still queues, on done, a key added during processing before the shutdown", async () => {
    const q = newTyped<string>();
    q.add("a");
    await getNow(q);
    q.add("a");
    q.shutDown();
    q.done("a");
    expect(await q.get()).toEqual({ item: "a", shutdown: false });
  });

  it("shutDownWithDrain waits until every item being processed is done", async () => {
    const q = newTyped<string>();
    q.add("a");
    q.add("b");
    await getNow(q);
    await getNow(q);
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => {
      drained = true;
    });
    await settle();
    expect(drained).toBe(false);
    q.done("a");
    await settle();
    expect(drained).toBe(false);
    q.done("b");
    await drain;
    expect(drained).toBe(true);
  });

  it("shutDownWithDrain returns at once when nothing is being processed", async () => {
    const q = newTyped<string>();
    await q.shutDownWithDrain();
    expect(q.shuttingDown()).toBe(true);
  });

  it("waits for a key re-queued during the drain to be processed too", async () => {
    const q = newTyped<string>();
    q.add("a");
    await getNow(q);
    q.add("a");
    let drained = false;
    const drain = q.shutDownWithDrain().then(() => {
      drained = true;
    });
    q.done("a"); // "a" was dirty: back in the queue, not yet drained
    await settle();
    expect(drained).toBe(false);
    expect(await getNow(q)).toBe("a");
    q.done("a");
    await drain;
    expect(drained).toBe(true);
  });

  it("ShutDown after ShutDownWithDrain stops the wait", async () => {
    const q = newTyped<string>();
    q.add("a");
    await getNow(q);
    const drain = q.shutDownWithDrain();
    q.shutDown();
    await drain; // resolves though "a" is never done
    expect(q.shuttingDown()).toBe(true);
  });
});
