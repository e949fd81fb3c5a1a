// Exercise 7.1: your countResult as a table, then inside the course's real probe Worker
// (code/kubelet/prober/worker.ts) on a fake clock — a readiness probe flipping both ways, a
// liveness probe that must fail failureThreshold times in a row before the container is killed,
// and a restarted container that must become Ready again.
import { describe, expect, it } from "vitest";
import type { Container, ContainerStatus, Pod, PodStatus, Probe } from "../../../code/api/core.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import { type Result, ResultsManager } from "../../../code/kubelet/prober/results/results-manager.ts";
import { type ProbeType, type RunState, Worker } from "../../../code/kubelet/prober/worker.ts";
import { countResult } from "./count-result.ts";

const T0 = Date.UTC(2026, 11, 7, 1, 0, 0);

/** Counts `results` one after the other from `start`; returns what was published and the last run. */
function feed(
  results: Result[],
  thresholds: { successThreshold: number; failureThreshold: number },
  start: RunState = { lastResult: "Unknown", resultRun: 0 },
) {
  let state = start;
  const published: boolean[] = [];
  for (const r of results) {
    const counted = countResult(state, r, thresholds);
    state = counted.state;
    published.push(counted.publish);
  }
  return { published, state };
}

describe("countResult", () => {
  it("a failure is published on the failureThreshold-th in a row, and on every one after", () => {
    const { published, state } = feed(["Failure", "Failure", "Failure", "Failure"], {
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(published).toEqual([false, false, true, true]);
    expect(state).toEqual({ lastResult: "Failure", resultRun: 4 });
  });

  it("successThreshold 1 (the default): the first success is published", () => {
    const { published } = feed(["Success"], { successThreshold: 1, failureThreshold: 3 });
    expect(published).toEqual([true]);
  });

  it("a different result starts a new run of 1, in both directions", () => {
    const { published, state } = feed(
      ["Success", "Failure", "Success", "Success"],
      { successThreshold: 2, failureThreshold: 2 },
      { lastResult: "Failure", resultRun: 1 },
    );
    expect(published).toEqual([false, false, false, true]);
    expect(state).toEqual({ lastResult: "Success", resultRun: 2 });
  });

  it("Unknown has no threshold: published at once", () => {
    const { published, state } = feed(
      ["Unknown"],
      { successThreshold: 3, failureThreshold: 5 },
      {
        lastResult: "Success",
        resultRun: 7,
      },
    );
    expect(published).toEqual([true]);
    expect(state).toEqual({ lastResult: "Unknown", resultRun: 1 });
  });
});

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/**
 * One container with one probe, probed by the real Worker with your countResult; the probe answers
 * from `script` (Success once it runs out). `updates` is what the results manager published, as
 * [seconds since start, result, container ID] — what the kubelet acts on.
 */
function setup(probeType: ProbeType, spec: Probe) {
  const clock = new FakeClock(T0);
  const field = { Liveness: "livenessProbe", Readiness: "readinessProbe", Startup: "startupProbe" }[
    probeType
  ];
  const container = { name: "app", image: "course/web", [field]: spec } as Container;
  const pod: Pod = {
    metadata: { name: "web", namespace: "default", uid: "uid-1" },
    spec: { containers: [container] },
  };
  const cs: ContainerStatus = {
    name: "app",
    containerID: "process://c1",
    state: { running: { startedAt: new Date(T0).toISOString() } },
    ready: false,
    restartCount: 0,
    image: "course/web",
    imageID: "",
    started: true,
  };
  const status: PodStatus = { phase: "Running", containerStatuses: [cs] };
  const rm = new ResultsManager();
  const updates: [number, Result, string][] = [];
  rm.onUpdate((u) => updates.push([(clock.now() - T0) / 1000, u.result, u.containerID]));
  const script: Result[] = [];
  const probes: number[] = [];
  const worker = new Worker({
    probeType,
    pod,
    container,
    resultsManager: rm,
    getPodStatus: (uid) => (uid === "uid-1" ? status : undefined),
    probe: async () => {
      probes.push((clock.now() - T0) / 1000);
      return script.shift() ?? "Success";
    },
    clock,
    managerStart: T0 - 3_600_000, // the kubelet has run for an hour: the first probe is not delayed
    countResult, // yours
  });
  let running: Promise<void> | undefined;
  let crashed: unknown;
  /** Moves the fake clock `s` seconds, a second at a time, letting the worker probe. */
  const advance = async (s: number) => {
    running ??= worker.run().catch((err) => {
      crashed = err; // the worker died (your function threw): the test fails with its error
    });
    await flush();
    for (let i = 0; i < s; i++) {
      if (crashed) throw crashed;
      clock.step(1000);
      await flush();
    }
    if (crashed) throw crashed;
  };
  const stop = async () => {
    worker.stop();
    await running;
  };
  return { cs, rm, updates, script, probes, advance, stop };
}

describe("inside the real probe Worker", () => {
  it("readiness flipping (successThreshold 2, failureThreshold 3): only runs that reach their threshold change it", async () => {
    const t = setup("Readiness", { periodSeconds: 1, successThreshold: 2, failureThreshold: 3 });
    // seconds:     0          1          2          3          4          5          6          7          8          9
    t.script.push(
      "Success",
      "Success",
      "Failure",
      "Failure",
      "Success",
      "Failure",
      "Failure",
      "Failure",
      "Success",
      "Success",
    );
    await t.advance(9);
    expect(t.probes).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(t.updates).toEqual([
      [0, "Failure", "process://c1"], // the worker's initial value: not Ready until a probe says so
      [1, "Success", "process://c1"], // the second success in a row
      [7, "Failure", "process://c1"], // the third failure in a row (the two at 2–3 were cut by a success)
      [9, "Success", "process://c1"],
    ]);
    await t.stop();
  });

  it("liveness (failureThreshold 3): Failure — the kill — on the third failure in a row, then the worker holds", async () => {
    const t = setup("Liveness", { periodSeconds: 2, failureThreshold: 3 });
    t.script.push("Failure", "Failure", "Failure");
    await t.advance(10);
    expect(t.updates).toEqual([
      [0, "Success", "process://c1"], // liveness starts alive
      [4, "Failure", "process://c1"],
    ]);
    expect(t.probes).toEqual([0, 2, 4]); // on hold: no probe into a container being killed
    await t.stop();
  });

  it("liveness: failures that passes interrupt never add up to a kill", async () => {
    const t = setup("Liveness", { periodSeconds: 1, failureThreshold: 3 });
    t.script.push("Failure", "Failure", "Success", "Failure", "Failure", "Success", "Failure", "Failure");
    await t.advance(10);
    expect(t.updates).toEqual([[0, "Success", "process://c1"]]);
    expect(t.rm.get("process://c1")).toBe("Success");
    await t.stop();
  });

  it("the default successThreshold 1: Ready at the first passing probe, not a period later", async () => {
    const t = setup("Readiness", { periodSeconds: 10 });
    await t.advance(5);
    expect(t.updates).toEqual([
      [0, "Failure", "process://c1"],
      [0, "Success", "process://c1"],
    ]);
    await t.stop();
  });

  it("a restarted container is Ready again at its first passing probe", async () => {
    const t = setup("Readiness", { periodSeconds: 1, failureThreshold: 3 });
    await t.advance(3); // Ready since 0
    t.cs.state = { terminated: { exitCode: 1 } }; // it crashed: not Ready (no probe needed)
    await t.advance(1);
    t.cs.containerID = "process://c2"; // the kubelet started a new one
    t.cs.state = { running: { startedAt: new Date(T0 + 5000).toISOString() } };
    await t.advance(2);
    expect(t.updates).toEqual([
      [0, "Failure", "process://c1"],
      [0, "Success", "process://c1"],
      [4, "Failure", "process://c1"],
      [5, "Failure", "process://c2"], // the new container's initial value
      [5, "Success", "process://c2"], // its first probe passed
    ]);
    expect(t.rm.get("process://c2")).toBe("Success");
    await t.stop();
  });
});
