import { describe, expect, it } from "vitest";
import { slowStartBatch } from "./slow-start-batch.ts";

/** Records the batches: calls that started before any of them settled belong to one batch. */
function recorder(failAt?: number) {
  const batches: number[] = [];
  let inFlight = 0;
  let calls = 0;
  const fn = async () => {
    const n = ++calls;
    if (inFlight === 0) batches.push(0);
    inFlight++;
    batches[batches.length - 1]++;
    await Promise.resolve();
    inFlight--;
    if (n === failAt) throw new Error(`call ${n} failed`);
  };
  return { fn, batches, calls: () => calls };
}

describe("slowStartBatch", () => {
  it("runs batches of 1, 2, 4, … up to the count", async () => {
    const r = recorder();
    expect(await slowStartBatch(10, 1, r.fn)).toEqual({ successes: 10 });
    expect(r.batches).toEqual([1, 2, 4, 3]);
  });

  it("stops after the first batch with a failure, counting that batch's successes", async () => {
    const r = recorder(5); // the 5th call is in the third batch (calls 4–7)
    const res = await slowStartBatch(20, 1, r.fn);
    expect(res.successes).toBe(6);
    expect((res.error as Error).message).toBe("call 5 failed");
    expect(r.batches).toEqual([1, 2, 4]);
    expect(r.calls()).toBe(7);
  });

  it("makes no call for a count of 0, and starts at the initial batch size", async () => {
    const none = recorder();
    expect(await slowStartBatch(0, 1, none.fn)).toEqual({ successes: 0 });
    expect(none.calls()).toBe(0);
    const r = recorder();
    await slowStartBatch(7, 3, r.fn);
    expect(r.batches).toEqual([3, 4]);
  });
});
