// Exercise 7.4: your newCrashLoopBackOff and doBackOff, first alone, then inside the course's real
// KubeGenericRuntimeManager over the fake runtime on a FakeClock: a container that keeps exiting is
// synced once a (fake) second, as a kubelet does, and the test watches when it is restarted and
// what its status says meanwhile.
import { describe, expect, it } from "vitest";
import type { PodStatus as APIPodStatus, Container, Pod } from "../../../code/api/core.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import { generateAPIPodStatus } from "../../../code/kubelet/kubelet-pods.ts";
import { getStableKey } from "../../../code/kubelet/kuberuntime/crash-loop-backoff.ts";
import type { OSInterface } from "../../../code/kubelet/kuberuntime/kuberuntime-container.ts";
import { KubeGenericRuntimeManager } from "../../../code/kubelet/kuberuntime/kuberuntime-manager.ts";
import { ResultsManager } from "../../../code/kubelet/prober/results/results-manager.ts";
import { FakeImageService } from "../../../code/kubelet/runtime/fake-image-service.ts";
import { FakeRuntimeService } from "../../../code/kubelet/runtime/fake-runtime-service.ts";
import { ReasonCache } from "../../../code/kubelet/util/reason-cache.ts";
import { doBackOff, newCrashLoopBackOff } from "./crash-loop-backoff.ts";

const s = 1000;
const T0 = Date.UTC(2026, 11, 7, 4, 0, 0);
const app: Container = { name: "app", image: "crash:1", imagePullPolicy: "IfNotPresent" };
const pod: Pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default", uid: "uid-1" },
  spec: { containers: [app], terminationGracePeriodSeconds: 30, nodeName: "node-1" },
};
const message = (wait: string) => `back-off ${wait} restarting failed container=app pod=web_default(uid-1)`;

describe("newCrashLoopBackOff", () => {
  it("waits 10 s first, doubles each time, and stops growing at 300 s", () => {
    const clock = new FakeClock(T0);
    const backOff = newCrashLoopBackOff(clock);
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) {
      backOff.next("k", clock.now());
      seen.push(backOff.get("k") / s);
      clock.step(s);
    }
    expect(seen).toEqual([10, 20, 40, 80, 160, 300, 300, 300]);
  });
});

describe("doBackOff", () => {
  it("nothing to back off from before the container has exited, and the first exit restarts at once", () => {
    const clock = new FakeClock(T0);
    const backOff = newCrashLoopBackOff(clock);
    expect(doBackOff(pod, app, undefined, backOff)).toEqual({ inBackOff: false });
    expect(backOff.get(getStableKey(pod, app))).toBe(0);
    expect(doBackOff(pod, app, clock.now(), backOff)).toEqual({ inBackOff: false });
  });

  it("a second exit right away is held back 10 s, with upstream's reason, message and event", () => {
    const clock = new FakeClock(T0);
    const backOff = newCrashLoopBackOff(clock);
    doBackOff(pod, app, clock.now(), backOff);
    clock.step(2 * s);
    const exitedAt = clock.now();
    expect(doBackOff(pod, app, exitedAt, backOff)).toEqual({
      inBackOff: true,
      reason: "CrashLoopBackOff",
      message: message("10s"),
      event: {
        reason: "BackOff",
        message: "Back-off restarting failed container app in pod web_default(uid-1)",
      },
    });
    clock.step(10 * s - 1);
    expect(doBackOff(pod, app, exitedAt, backOff).inBackOff).toBe(true);
    clock.step(1);
    expect(doBackOff(pod, app, exitedAt, backOff)).toEqual({ inBackOff: false });
  });
});

/** In-memory log directories: no real I/O, so only the fake clock moves time. */
const memOS: OSInterface = {
  mkdirAll: async () => {},
  readDir: async () => {
    throw new Error("ENOENT");
  },
};

/** The real runtime manager with your doBackOff plugged in, over the fake runtime. */
function kubelet(image: { exitAfterMs: number }) {
  const clock = new FakeClock(T0);
  const imageService = new FakeImageService();
  imageService.register("crash:1", { ...image, exitCode: 1 });
  const runtimeService = new FakeRuntimeService(clock, imageService);
  const events: { reason: string; message: string }[] = [];
  const manager = new KubeGenericRuntimeManager({
    runtimeService,
    imageService,
    clock,
    recorder: (_obj, _type, reason, message) => events.push({ reason, message }),
    podLogsRootDirectory: "/var/log/pods",
    livenessManager: new ResultsManager(),
    startupManager: new ResultsManager(),
    runtimeName: "fake",
    osInterface: memOS,
    doBackOff,
  });
  const reasonCache = new ReasonCache();
  const backOff = newCrashLoopBackOff(clock);
  let last: APIPodStatus | undefined;

  /** One sync as the kubelet's SyncPod does it: runtime status, syncPod, reason cache, API status. */
  async function sync(): Promise<APIPodStatus> {
    const before = await manager.getPodStatus("uid-1", "web", "default");
    const result = await manager.syncPod(pod, before, backOff);
    reasonCache.update("uid-1", result);
    const after = await manager.getPodStatus("uid-1", "web", "default");
    last = generateAPIPodStatus(pod, after, false, { reasonCache, clock, oldPodStatus: last });
    return last;
  }

  /**
   * Syncs once a fake second for `seconds`; returns when the container was (re)started, in
   * seconds from T0, and the waiting messages in the order they first appeared.
   */
  async function run(seconds: number, starts: number[] = [], messages: string[] = []) {
    for (let i = 0; i < seconds; i++) {
      const cs = (await sync()).containerStatuses?.[0];
      if (cs && (cs.state?.running || cs.state?.terminated) && cs.restartCount === starts.length)
        starts.push((clock.now() - T0) / s);
      const m = cs?.state?.waiting?.message;
      if (cs?.state?.waiting?.reason === "CrashLoopBackOff" && m && !messages.includes(m)) messages.push(m);
      clock.step(s);
    }
    return { starts, messages };
  }
  return { clock, imageService, events, run };
}

const gaps = (starts: number[]) => starts.slice(1).map((t, i) => t - starts[i]);

describe("inside the real KubeGenericRuntimeManager", () => {
  it("a container that exits at once is restarted at the next sync, then after 10, 20, 40, 80, 160, 300, 300 s", async () => {
    const k = kubelet({ exitAfterMs: 0 });
    const { starts } = await k.run(1000);
    // It runs for no time, so start to start is exit to restart; the first restart waits only
    // for the next sync (one second).
    expect(gaps(starts).slice(0, 8)).toEqual([1, 10, 20, 40, 80, 160, 300, 300]);
  });

  it("meanwhile its status says CrashLoopBackOff and how long, as kubectl shows it", async () => {
    const k = kubelet({ exitAfterMs: 0 });
    const { messages } = await k.run(700);
    expect(messages).toEqual(["10s", "20s", "40s", "1m20s", "2m40s", "5m0s"].map(message));
    expect(k.events.filter((e) => e.reason === "BackOff")[0]?.message).toBe(
      "Back-off restarting failed container app in pod web_default(uid-1)",
    );
  });

  it("the wait counts from the exit, not from the restart: a container that runs 30 s waits 0, 10, 20, 40 s", async () => {
    const k = kubelet({ exitAfterMs: 30 * s });
    const { starts } = await k.run(200);
    expect(gaps(starts).map((g) => g - 30)).toEqual([0, 10, 20, 40]);
  });

  it("a run of exactly 600 s still counts as crashing: the next wait is 40 s", async () => {
    const k = kubelet({ exitAfterMs: 0 });
    const { starts, messages } = await k.run(12); // restarts at 1 and 11 s; the backoff is at 20 s
    k.imageService.register("crash:1", { exitAfterMs: 600 * s, exitCode: 1 });
    await k.run(700, starts, messages); // restarted at 31 s, exits at 631 s
    expect(starts.slice(0, 5)).toEqual([0, 1, 11, 31, 631 + 40]);
  });

  it("a run of more than 600 s starts the backoff over: restarted at the next sync, then 10 s", async () => {
    const k = kubelet({ exitAfterMs: 0 });
    const { starts, messages } = await k.run(12);
    k.imageService.register("crash:1", { exitAfterMs: 600 * s + 1, exitCode: 1 });
    await k.run(30, starts, messages); // restarted at 31 s, exits at 631.001 s
    k.imageService.register("crash:1", { exitAfterMs: 0, exitCode: 1 });
    await k.run(620, starts, messages);
    expect(starts.slice(0, 6)).toEqual([0, 1, 11, 31, 632, 642]);
  });
});
