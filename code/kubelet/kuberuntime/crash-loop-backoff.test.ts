import { describe, expect, it } from "vitest";
import type { Container, Pod } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { doBackOff, getStableKey, newCrashLoopBackOff } from "./crash-loop-backoff.ts";

const s = 1000;
const app: Container = { name: "app", image: "busybox:1.36" };
const pod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default", uid: "uid-1" },
  spec: { containers: [app] },
};

/**
 * A kubelet syncing once a second a container that exits `runs[i]` ms after its i-th start.
 * Returns how long each exit waited before the restart (the first start is not an exit).
 */
function simulate(runs: number[]): number[] {
  const clock = new FakeClock(1_000_000 * s);
  const backOff = newCrashLoopBackOff(clock);
  const waits: number[] = [];
  let finishedAt = clock.now() + runs[0];
  for (let i = 1; i < runs.length; i++) {
    while (clock.now() < finishedAt) clock.step(1 * s);
    for (;;) {
      const r = doBackOff(pod, app, finishedAt, backOff);
      if (!r.inBackOff) break;
      clock.step(1 * s);
    }
    waits.push((clock.now() - finishedAt) / s);
    finishedAt = clock.now() + runs[i];
  }
  return waits;
}

describe("CrashLoopBackOff", () => {
  it("restarts a crashing container after 0, 10, 20, 40, 80, 160, 300, 300 s", () => {
    expect(simulate(new Array(9).fill(0))).toEqual([0, 10, 20, 40, 80, 160, 300, 300]);
  });

  it("starts over at 10 s once a run lasted more than 10 minutes, not at exactly 10 minutes", () => {
    // Three quick crashes (waits 0, 10, 20), then a run of 600 s: still backing off (40 s).
    expect(simulate([0, 0, 0, 600 * s, 0])).toEqual([0, 10, 20, 40]);
    // The same with a run of 601 s: restarted at once, and the next crash waits 10 s again.
    expect(simulate([0, 0, 0, 601 * s, 0, 0])).toEqual([0, 10, 20, 0, 10]);
  });

  it("reports upstream's reason and message while it holds the restart back", () => {
    const clock = new FakeClock(0);
    const backOff = newCrashLoopBackOff(clock);
    for (const d of [10, 20, 40, 80]) {
      backOff.next(getStableKey(pod, app), clock.now());
      expect(backOff.get(getStableKey(pod, app))).toBe(d * s);
    }
    const r = doBackOff(pod, app, clock.now(), backOff);
    expect(r).toEqual({
      inBackOff: true,
      reason: "CrashLoopBackOff",
      message: "back-off 1m20s restarting failed container=app pod=web_default(uid-1)",
      event: {
        reason: "BackOff",
        message: "Back-off restarting failed container app in pod web_default(uid-1)",
      },
    });
    clock.step(80 * s);
    expect(doBackOff(pod, app, 0, backOff)).toEqual({ inBackOff: false });
    expect(backOff.get(getStableKey(pod, app))).toBe(160 * s);
  });

  it("does not back off a container that has not exited", () => {
    const backOff = newCrashLoopBackOff(new FakeClock(0));
    expect(doBackOff(pod, app, undefined, backOff)).toEqual({ inBackOff: false });
    expect(backOff.get(getStableKey(pod, app))).toBe(0);
  });

  it("keys the backoff by pod, container and spec: a changed image starts fresh", () => {
    const key = getStableKey(pod, app);
    expect(key).toMatch(/^web_default_uid-1_app_[0-9a-f]+$/);
    expect(getStableKey(pod, { ...app, image: "busybox:1.37" })).not.toBe(key);
    expect(getStableKey({ ...pod, metadata: { ...pod.metadata, uid: "uid-2" } }, app)).not.toBe(key);
  });
});
