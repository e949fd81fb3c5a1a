/**
 * The taint-eviction controller's timers and toleration arithmetic on a FakeClock: a timer fires
 * at its deadline and not before, a cancelled one never fires, a second addWork keeps the first
 * deadline, work due now runs at once; the smallest tolerationSeconds wins, none means forever.
 */
import { describe, expect, it } from "vitest";
import type { Taint, Toleration } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { getMatchingTolerations, getMinTolerationTime } from "./taint-eviction.ts";
import { TimedWorkerQueue } from "./timed-workers.ts";

const settle = () => new Promise((r) => setImmediate(r));

describe("TimedWorkerQueue", () => {
  it("fires at fireAt, not before; a cancelled timer never fires", async () => {
    const clock = new FakeClock(1_000);
    const fired: string[] = [];
    const q = new TimedWorkerQueue(clock, async (key) => {
      fired.push(key);
    });
    q.addWork("ns/a", 1_000, 4_000);
    q.addWork("ns/b", 1_000, 4_000);
    clock.step(2_999);
    await settle();
    expect(fired).toEqual([]);
    expect(q.cancelWork("ns/b")).toBe(true);
    clock.step(1);
    await settle();
    expect(fired).toEqual(["ns/a"]);
    // Done, but remembered: the pod is not deleted twice.
    q.addWork("ns/a", clock.now(), clock.now());
    await settle();
    expect(fired).toEqual(["ns/a"]);
    // A cancellation of finished work reports nothing to cancel.
    expect(q.cancelWork("ns/a")).toBe(false);
  });

  it("keeps the first deadline when the same key is added again; work due now runs at once", async () => {
    const clock = new FakeClock(0);
    const fired: [string, number][] = [];
    const q = new TimedWorkerQueue(clock, async (key) => {
      fired.push([key, clock.now()]);
    });
    q.addWork("ns/a", 0, 5_000);
    clock.step(1_000);
    q.addWork("ns/a", 1_000, 2_000); // ignored: already scheduled
    expect(q.getWorkerUnsafe("ns/a")?.fireAt).toBe(5_000);
    q.addWork("ns/now", 1_000, 1_000);
    await settle();
    expect(fired).toEqual([["ns/now", 1_000]]);
    clock.step(4_000);
    await settle();
    expect(fired).toEqual([
      ["ns/now", 1_000],
      ["ns/a", 5_000],
    ]);
  });

  it("forgets work that failed, so it can be scheduled again", async () => {
    const clock = new FakeClock(0);
    const errors: string[] = [];
    let fail = true;
    let done = 0;
    const q = new TimedWorkerQueue(
      clock,
      async () => {
        if (fail) throw new Error("boom");
        done++;
      },
      (key) => errors.push(key),
    );
    q.addWork("ns/a", 0, 0);
    await settle();
    await settle();
    expect(errors).toEqual(["ns/a"]);
    fail = false;
    q.addWork("ns/a", 0, 0);
    await settle();
    expect(done).toBe(1);
  });
});

describe("tolerations", () => {
  const unreachable: Taint = { key: "node.kubernetes.io/unreachable", effect: "NoExecute" };
  const notReady: Taint = { key: "node.kubernetes.io/not-ready", effect: "NoExecute" };
  const tol = (key: string, seconds?: number): Toleration => ({
    key,
    operator: "Exists",
    effect: "NoExecute",
    ...(seconds === undefined ? {} : { tolerationSeconds: seconds }),
  });

  it("finds the toleration used for each taint, or says one is not tolerated", () => {
    const ts = [tol(notReady.key, 300), tol(unreachable.key, 30)];
    expect(getMatchingTolerations([unreachable], ts)).toEqual([true, [ts[1]]]);
    expect(getMatchingTolerations([unreachable, notReady], [ts[0]])).toEqual([false, []]);
    expect(getMatchingTolerations([unreachable], undefined)).toEqual([false, []]);
    expect(getMatchingTolerations([], undefined)).toEqual([true, []]);
    // An empty key with Exists tolerates everything.
    expect(getMatchingTolerations([unreachable], [{ operator: "Exists" }])[0]).toBe(true);
  });

  it("takes the smallest tolerationSeconds; none set is forever (-1); 0 or less is now", () => {
    expect(getMinTolerationTime([tol("a", 300), tol("b", 30)])).toBe(30_000);
    expect(getMinTolerationTime([tol("a"), tol("b", 30)])).toBe(30_000);
    expect(getMinTolerationTime([tol("a")])).toBe(-1);
    expect(getMinTolerationTime([tol("a", 0), tol("b", 30)])).toBe(0);
    expect(getMinTolerationTime([])).toBe(0);
  });
});
