import { describe, expect, it } from "vitest";
import type { ContainerStatus, Pod, PodSpec, RestartPolicy } from "../api/core.ts";
import { getPhase } from "./pod-phase.ts";

const base = { ready: false, restartCount: 0, image: "img", imageID: "" };
const running = (name: string, started = true): ContainerStatus => ({
  ...base,
  name,
  started,
  state: { running: {} },
});
const exited = (name: string, exitCode: number): ContainerStatus => ({
  ...base,
  name,
  state: { terminated: { exitCode } },
});
const waiting = (name: string, lastExit?: number): ContainerStatus => ({
  ...base,
  name,
  state: { waiting: { reason: "ContainerCreating" } },
  lastState: lastExit === undefined ? {} : { terminated: { exitCode: lastExit } },
});
const noState = (name: string): ContainerStatus => ({ ...base, name, state: {} });

function pod(
  restartPolicy: RestartPolicy,
  init: string[] = [],
  sidecars: string[] = [],
  annotations?: Record<string, string>,
): Pod {
  const spec: PodSpec = {
    restartPolicy,
    containers: [{ name: "a" }, { name: "b" }],
    initContainers: [
      ...init.map((name) => ({ name })),
      ...sidecars.map((name) => ({ name, restartPolicy: "Always" as const })),
    ],
  };
  return { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "ns", annotations }, spec };
}

describe("getPhase: app containers", () => {
  it("Pending while any container waits for its first run, or has no status", () => {
    expect(getPhase(pod("Always"), [running("a"), waiting("b")], false)).toBe("Pending");
    expect(getPhase(pod("Always"), [running("a")], false)).toBe("Pending");
    expect(getPhase(pod("Always"), [running("a"), noState("b")], false)).toBe("Pending");
    expect(getPhase(pod("Always"), [], false)).toBe("Pending");
  });

  it("Running when all have started and one runs, whatever the others did", () => {
    for (const policy of ["Always", "OnFailure", "Never"] as const) {
      expect(getPhase(pod(policy), [running("a"), running("b")], false)).toBe("Running");
      expect(getPhase(pod(policy), [running("a"), exited("b", 1)], false)).toBe("Running");
      expect(getPhase(pod(policy), [running("a"), waiting("b", 1)], false)).toBe("Running");
    }
  });

  it("all stopped: the restartPolicy decides", () => {
    const allOk = [exited("a", 0), exited("b", 0)];
    const oneFailed = [exited("a", 0), exited("b", 2)];
    expect(getPhase(pod("Always"), allOk, false)).toBe("Running"); // about to restart
    expect(getPhase(pod("Always"), oneFailed, false)).toBe("Running");
    expect(getPhase(pod("OnFailure"), allOk, false)).toBe("Succeeded");
    expect(getPhase(pod("OnFailure"), oneFailed, false)).toBe("Running"); // b restarts
    expect(getPhase(pod("Never"), allOk, false)).toBe("Succeeded");
    expect(getPhase(pod("Never"), oneFailed, false)).toBe("Failed");
    // Waiting after a run (CrashLoopBackOff) counts as stopped, not as succeeded.
    expect(getPhase(pod("OnFailure"), [exited("a", 0), waiting("b", 1)], false)).toBe("Running");
    expect(getPhase(pod("Never"), [exited("a", 0), waiting("b", 0)], false)).toBe("Failed");
  });

  it("a terminal pod gets Succeeded or Failed from exit codes, even under Always — but not a static pod", () => {
    expect(getPhase(pod("Always"), [exited("a", 0), exited("b", 0)], true)).toBe("Succeeded");
    expect(getPhase(pod("Always"), [exited("a", 0), exited("b", 137)], true)).toBe("Failed");
    const staticPod = pod("Always", [], [], { "kubernetes.io/config.source": "file" });
    expect(getPhase(staticPod, [exited("a", 0), exited("b", 137)], true)).toBe("Running");
    const apiPod = pod("Always", [], [], { "kubernetes.io/config.source": "api" });
    expect(getPhase(apiPod, [exited("a", 0), exited("b", 137)], true)).toBe("Failed");
  });
});

describe("getPhase: init containers", () => {
  it("Pending while an init container has not finished; Failed at once under Never when one failed", () => {
    const p = pod("Never", ["i1", "i2"]);
    expect(getPhase(p, [exited("i1", 0), running("i2")], false)).toBe("Pending");
    expect(getPhase(p, [exited("i1", 0)], false)).toBe("Pending");
    expect(getPhase(p, [exited("i1", 0), exited("i2", 1)], false)).toBe("Failed");
    expect(getPhase(p, [exited("i1", 0), waiting("i2", 1)], false)).toBe("Failed");
  });

  it("a failed init container under OnFailure or Always keeps the pod Pending (it is retried)", () => {
    for (const policy of ["OnFailure", "Always"] as const) {
      const p = pod(policy, ["i1"]);
      expect(getPhase(p, [waiting("i1", 1), waiting("a"), waiting("b")], false)).toBe("Pending");
    }
  });

  it("all init containers done: the app containers decide", () => {
    const p = pod("Always", ["i1"]);
    expect(getPhase(p, [exited("i1", 0), running("a"), running("b")], false)).toBe("Running");
  });
});

describe("getPhase: sidecars", () => {
  it("a sidecar that has not started holds the pod in Pending; once started it counts as running", () => {
    const p = pod("Always", [], ["s"]);
    expect(getPhase(p, [running("s", false), waiting("a"), waiting("b")], false)).toBe("Pending");
    expect(getPhase(p, [running("s"), running("a"), running("b")], false)).toBe("Running");
  });

  it("a restarting sidecar does not send a pod whose app containers ran back to Pending", () => {
    const p = pod("Always", [], ["s"]);
    // In CrashLoopBackOff after a run: ignored.
    expect(getPhase(p, [waiting("s", 1), running("a"), running("b")], false)).toBe("Running");
    // Restarted but its startup probe has not passed yet: pending initialization, overridden.
    expect(getPhase(p, [running("s", false), running("a"), running("b")], false)).toBe("Running");
    expect(getPhase(p, [running("s", false), waiting("a"), waiting("b")], false)).toBe("Pending");
  });

  it("an exited sidecar does not decide Succeeded or Failed", () => {
    const p = pod("Never", [], ["s"]);
    expect(getPhase(p, [exited("s", 1), exited("a", 0), exited("b", 0)], false)).toBe("Succeeded");
    expect(getPhase(p, [running("s"), exited("a", 0), exited("b", 0)], false)).toBe("Running");
  });
});
