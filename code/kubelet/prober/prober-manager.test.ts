import { describe, expect, it } from "vitest";
import type { Pod, PodStatus } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { ProberManager } from "./prober-manager.ts";
import type { Result, Update } from "./results/results-manager.ts";
import type { ProbeType } from "./worker.ts";

/** Lets the workers run: fires timers due now (their start-up jitter is 0 here), then settles. */
let clockForTick: FakeClock | undefined;
const tick = async () => {
  for (let i = 0; i < 5; i++) {
    clockForTick?.step(0);
    await new Promise((r) => setImmediate(r));
  }
};

const pod: Pod = {
  metadata: { name: "p", namespace: "default", uid: "u1" },
  spec: {
    containers: [
      {
        name: "web",
        image: "course/web",
        readinessProbe: { httpGet: { path: "/ready", port: 8080 }, periodSeconds: 10 },
        livenessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 10, failureThreshold: 2 },
      },
      {
        name: "side",
        image: "course/sleeper",
        startupProbe: { exec: { command: ["true"] }, periodSeconds: 10 },
      },
      { name: "plain", image: "course/sleeper" },
    ],
  },
};

const status = (): PodStatus => ({
  phase: "Running",
  containerStatuses: ["web", "side", "plain"].map((name, i) => ({
    name,
    ready: false,
    restartCount: 0,
    image: "img",
    imageID: "i",
    containerID: `fake://${i + 1}`,
    state: { running: { startedAt: "2026-01-01T00:00:00Z" } },
  })),
});

function setup() {
  const clock = new FakeClock(Date.parse("2026-01-01T00:01:00Z"));
  clockForTick = clock;
  const answers: Record<ProbeType, Result> = {
    Liveness: "Success",
    Readiness: "Success",
    Startup: "Failure",
  };
  const probes: string[] = [];
  let current = status();
  const m = new ProberManager({
    getPodStatus: () => current,
    probe: async (t, _p, _s, c) => {
      probes.push(`${t} ${c.name}`);
      return answers[t];
    },
    clock,
    random: () => 0,
  });
  // The status the kubelet would report: started from the startup results.
  const refresh = () => {
    current = status();
    m.updatePodStatus(pod, current);
  };
  return {
    clock,
    answers,
    probes,
    m,
    refresh,
    get current() {
      return current;
    },
  };
}

describe("ProberManager", () => {
  it("starts one worker per container and probe type, once", () => {
    const { m } = setup();
    m.addPod(pod);
    m.addPod(pod);
    expect(m.workerCount()).toBe(3);
    m.removePod(pod);
  });

  it("folds results into started and ready; no probe means started and ready", async () => {
    const s = setup();
    s.refresh();
    s.m.addPod(pod);
    const st = status();
    s.m.updatePodStatus(pod, st); // before any verdict
    expect(st.containerStatuses!.map((c) => [c.name, c.started, c.ready])).toEqual([
      ["web", true, false],
      ["side", false, false],
      ["plain", true, true],
    ]);
    await tick(); // the workers' first probes
    const after = status();
    s.m.updatePodStatus(pod, after);
    expect(after.containerStatuses!.map((c) => [c.name, c.started, c.ready])).toEqual([
      ["web", true, true],
      ["side", false, false], // its startup probe fails: not started, not ready
      ["plain", true, true],
    ]);
    s.refresh();
    s.answers.Startup = "Success";
    s.clock.step(10_000);
    await tick();
    const later = status();
    s.m.updatePodStatus(pod, later);
    expect(later.containerStatuses![1]).toMatchObject({ started: true, ready: true });
    await s.m.stop();
    expect(s.clock.hasWaiters()).toBe(false);
  });

  it("publishes a liveness Failure after failureThreshold runs, for the sync loop to act on", async () => {
    const s = setup();
    const updates: Update[] = [];
    s.m.livenessManager.onUpdate((u) => updates.push(u));
    s.refresh();
    s.m.addPod(pod);
    await tick();
    expect(updates.map((u) => u.result)).toEqual(["Success"]); // the initial value
    s.answers.Liveness = "Failure";
    s.clock.step(10_000);
    await tick();
    expect(updates.length).toBe(1); // one failure is below the threshold of 2
    s.clock.step(10_000);
    await tick();
    expect(updates.map((u) => [u.containerID, u.result, u.podUID])).toEqual([
      ["fake://1", "Success", "u1"],
      ["fake://1", "Failure", "u1"],
    ]);
    await s.m.stop();
  });

  it("cleanupPods stops the workers of pods no longer wanted", async () => {
    const s = setup();
    s.m.addPod(pod);
    s.m.cleanupPods(new Set(["u1"]));
    await tick();
    expect(s.m.workerCount()).toBe(3);
    s.m.cleanupPods(new Set());
    await tick();
    expect(s.m.workerCount()).toBe(0);
  });
});
