import { describe, expect, it } from "vitest";
import type { Container, ContainerStatus, Pod, PodStatus, Probe } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { type Result, ResultsManager, type Update } from "./results/results-manager.ts";
import { countResult, type ProbeType, Worker } from "./worker.ts";

const T0 = 1_000_000;
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** A pod with one container, a status the test edits, and a worker probing it from a script. */
function setup(probeType: ProbeType, spec: Probe, opts: { started?: boolean; managerStart?: number } = {}) {
  const clock = new FakeClock(T0);
  const field = { Liveness: "livenessProbe", Readiness: "readinessProbe", Startup: "startupProbe" }[
    probeType
  ];
  const container = { name: "app", [field]: spec } as Container;
  const pod: Pod = {
    metadata: { name: "p", namespace: "default", uid: "uid-1" },
    spec: { containers: [container] },
  };
  const cs: ContainerStatus = {
    name: "app",
    containerID: "containerd://c1",
    state: { running: { startedAt: new Date(T0).toISOString() } },
    ready: false,
    restartCount: 0,
    image: "img",
    imageID: "",
    started: opts.started ?? true,
  };
  const status: PodStatus = { phase: "Running", containerStatuses: [cs] };
  const rm = new ResultsManager();
  const updates: [number, Result, string][] = [];
  rm.onUpdate((u: Update) => updates.push([(clock.now() - T0) / 1000, u.result, u.containerID]));
  const script: (Result | Error)[] = [];
  const probes: number[] = [];
  let exited = false;
  const w = new Worker({
    probeType,
    pod,
    container,
    resultsManager: rm,
    getPodStatus: (uid) => (uid === "uid-1" ? status : undefined),
    probe: async () => {
      probes.push((clock.now() - T0) / 1000);
      const next = script.shift() ?? "Success";
      if (next instanceof Error) throw next;
      return next;
    },
    clock,
    managerStart: opts.managerStart ?? 0,
    random: () => 0.5,
    onExit: () => {
      exited = true;
    },
  });
  let running: Promise<void> | undefined;
  /** Moves the fake clock `s` seconds, one second at a time, letting the worker react; the
   * first call starts the worker (so a test can shape the status before its first probe). */
  const advance = async (s: number) => {
    running ??= w.run();
    await flush();
    for (let i = 0; i < s; i++) {
      clock.step(1000);
      await flush();
    }
  };
  const done = () => running;
  return { clock, pod, cs, status, rm, w, updates, script, probes, done, advance, exited: () => exited };
}

describe("countResult", () => {
  const th = { successThreshold: 2, failureThreshold: 3 };
  it("publishes a failure only on the failureThreshold-th in a row, and every one after", () => {
    let s = { lastResult: "Unknown" as Result, resultRun: 0 };
    const published: boolean[] = [];
    for (const r of ["Failure", "Failure", "Failure", "Failure"] as Result[]) {
      const c = countResult(s, r, th);
      s = c.state;
      published.push(c.publish);
    }
    expect(published).toEqual([false, false, true, true]);
    expect(s.resultRun).toBe(4);
  });

  it("restarts the run when the result flips, in both directions", () => {
    let s = { lastResult: "Failure" as Result, resultRun: 2 };
    const seq: [Result, boolean][] = [];
    for (const r of ["Success", "Failure", "Success", "Success"] as Result[]) {
      const c = countResult(s, r, th);
      s = c.state;
      seq.push([r, c.publish]);
    }
    expect(seq).toEqual([
      ["Success", false],
      ["Failure", false],
      ["Success", false],
      ["Success", true],
    ]);
  });
});

describe("Worker", () => {
  it("readiness: starts at Failure, probes at once, then every period; publishes only changes at threshold", async () => {
    const t = setup("Readiness", { periodSeconds: 10, failureThreshold: 2 });
    t.script.push("Success", "Failure", "Success", "Failure", "Failure", "Failure");
    await t.advance(60);
    expect(t.probes).toEqual([0, 10, 20, 30, 40, 50, 60]);
    expect(t.updates).toEqual([
      [0, "Failure", "containerd://c1"], // the initial value
      [0, "Success", "containerd://c1"], // the first probe, not a period later
      [40, "Failure", "containerd://c1"], // the second failure in a row
      [60, "Success", "containerd://c1"], // one success is enough (successThreshold 1)
    ]);
    t.w.stop();
    await t.done();
  });

  it("initialDelaySeconds: no probe until that many whole seconds after the container started", async () => {
    const t = setup("Readiness", { periodSeconds: 10, initialDelaySeconds: 15 });
    await t.advance(30);
    expect(t.probes).toEqual([20, 30]);
    t.w.stop();
    await t.done();
  });

  it("a restarted kubelet spreads its workers: the first probe waits a random part of the period", async () => {
    const t = setup("Readiness", { periodSeconds: 10 }, { managerStart: T0 - 2000 });
    await t.advance(20);
    expect(t.probes).toEqual([5, 15]);
    t.w.stop();
    await t.done();
  });

  it("startup gates the others: liveness waits for started, startup stops once started", async () => {
    const live = setup("Liveness", { periodSeconds: 1 }, { started: false });
    const startup = setup("Startup", { periodSeconds: 1 }, { started: false });
    await live.advance(3);
    await startup.advance(3);
    expect(live.probes).toEqual([]);
    expect(startup.probes).toEqual([0, 1, 2, 3]);
    live.cs.started = true;
    startup.cs.started = true;
    await live.advance(2);
    await startup.advance(2);
    expect(live.probes).toEqual([4, 5]);
    expect(startup.probes).toEqual([0, 1, 2, 3]);
    for (const t of [live, startup]) {
      t.w.stop();
      await t.done();
    }
  });

  it("liveness failure at threshold is published once, then the worker holds until a new container", async () => {
    const t = setup("Liveness", { periodSeconds: 1, failureThreshold: 3 });
    t.script.push("Failure", "Failure", "Failure");
    await t.advance(5);
    expect(t.probes).toEqual([0, 1, 2]);
    expect(t.updates).toEqual([
      [0, "Success", "containerd://c1"],
      [2, "Failure", "containerd://c1"],
    ]);
    t.cs.containerID = "containerd://c2"; // the kubelet restarted it
    await t.advance(1);
    expect(t.probes).toEqual([0, 1, 2, 6]);
    expect(t.updates.slice(2)).toEqual([[6, "Success", "containerd://c2"]]);
    expect(t.rm.get("containerd://c1")).toBeUndefined();
    t.w.stop();
    await t.done();
  });

  it("throws away a run the prober could not judge", async () => {
    const t = setup("Readiness", { periodSeconds: 1, failureThreshold: 2 });
    t.script.push("Failure", new Error("probe errored"), "Failure");
    await t.advance(2);
    expect(t.w.resultRun).toEqual({ lastResult: "Failure", resultRun: 2 });
    t.w.stop();
    await t.done();
  });

  it("trigger probes at once instead of at the next tick", async () => {
    const t = setup("Readiness", { periodSeconds: 10 });
    await t.advance(3);
    t.w.trigger();
    await t.advance(0);
    expect(t.probes).toEqual([0, 3]);
    t.w.stop();
    await t.done();
  });

  it("exits for a terminated container that will not restart, removing its result", async () => {
    const t = setup("Readiness", { periodSeconds: 1 });
    t.pod.spec.restartPolicy = "Never";
    await t.advance(1);
    t.cs.state = { terminated: { exitCode: 0 } };
    await t.advance(1);
    await t.done();
    expect(t.exited()).toBe(true);
    expect(t.updates.at(-1)).toEqual([2, "Failure", "containerd://c1"]);
    expect(t.rm.get("containerd://c1")).toBeUndefined();
    expect(t.clock.hasWaiters()).toBe(false);
  });

  it("keeps probing a terminated container that will restart, and exits when the pod has finished", async () => {
    const t = setup("Readiness", { periodSeconds: 1 });
    t.cs.state = { terminated: { exitCode: 1 } };
    await t.advance(2);
    expect(t.updates).toEqual([[0, "Failure", "containerd://c1"]]);
    expect(t.exited()).toBe(false);
    t.status.phase = "Failed";
    await t.advance(1);
    await t.done();
    expect(t.exited()).toBe(true);
    expect(t.probes).toEqual([]);
  });
});
