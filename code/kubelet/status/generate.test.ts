import { describe, expect, it } from "vitest";
import type { ContainerStatus, Pod, PodCondition, PodSpec } from "../../api/core.ts";
import {
  GenerateContainersReadyCondition,
  GeneratePodInitializedCondition,
  GeneratePodReadyCondition,
  GeneratePodReadyToStartContainersCondition,
} from "./generate.ts";

const status = (name: string, ready: boolean, started?: boolean, running = true): ContainerStatus => ({
  name,
  ready,
  started,
  restartCount: 0,
  image: "img",
  imageID: "",
  state: running ? { running: {} } : { waiting: { reason: "PodInitializing" } },
});
const spec = (
  containers: string[],
  init: string[] = [],
  sidecars: string[] = [],
  gates: string[] = [],
): PodSpec => ({
  containers: containers.map((name) => ({ name })),
  initContainers: [
    ...init.map((name) => ({ name })),
    ...sidecars.map((name) => ({ name, restartPolicy: "Always" as const })),
  ],
  readinessGates: gates.map((conditionType) => ({ conditionType })),
});

describe("GenerateContainersReadyCondition", () => {
  it("no statuses at all: UnknownContainerStatuses", () => {
    expect(GenerateContainersReadyCondition(spec(["a"]), undefined, "Pending")).toEqual({
      type: "ContainersReady",
      status: "False",
      reason: "UnknownContainerStatuses",
    });
  });

  it("names unknown and unready containers, unknown first, in spec order", () => {
    const c = GenerateContainersReadyCondition(
      spec(["a", "b", "c", "d"]),
      [status("d", false), status("a", true), status("c", false)],
      "Running",
    );
    expect(c).toEqual({
      type: "ContainersReady",
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unknown status: [b], containers with unready status: [c d]",
    });
  });

  it("True when every app container and sidecar is ready; an unready sidecar counts", () => {
    const s = spec(["a"], ["init"], ["side"]);
    expect(
      GenerateContainersReadyCondition(s, [status("side", true), status("a", true)], "Running").status,
    ).toBe("True");
    expect(
      GenerateContainersReadyCondition(s, [status("side", false), status("a", true)], "Running").message,
    ).toBe("containers with unready status: [side]");
  });

  it("Succeeded with all known → PodCompleted; Failed → PodFailed even if containers say ready", () => {
    const s = spec(["a"]);
    expect(GenerateContainersReadyCondition(s, [status("a", false)], "Succeeded")).toEqual({
      type: "ContainersReady",
      status: "False",
      reason: "PodCompleted",
    });
    expect(GenerateContainersReadyCondition(s, [status("a", true)], "Failed")).toEqual({
      type: "ContainersReady",
      status: "False",
      reason: "PodFailed",
    });
    // Succeeded but a container unknown: the unknown message wins.
    expect(GenerateContainersReadyCondition(spec(["a", "b"]), [status("a", false)], "Succeeded").reason).toBe(
      "ContainersNotReady",
    );
  });
});

describe("GeneratePodReadyCondition", () => {
  it("copies ContainersReady's status, reason and message when containers are not ready", () => {
    expect(
      GeneratePodReadyCondition(spec(["a", "b"]), [], [status("a", false), status("b", false)], "Running"),
    ).toEqual({
      type: "Ready",
      status: "False",
      reason: "ContainersNotReady",
      message: "containers with unready status: [a b]",
    });
  });

  it("then every readiness gate must be a True condition", () => {
    const s = spec(["a"], [], [], ["lb/registered", "team/warm", "ok"]);
    const conditions: PodCondition[] = [
      { type: "team/warm", status: "False" },
      { type: "ok", status: "True" },
    ];
    expect(GeneratePodReadyCondition(s, conditions, [status("a", true)], "Running")).toEqual({
      type: "Ready",
      status: "False",
      reason: "ReadinessGatesNotReady",
      message:
        'corresponding condition of pod readiness gate "lb/registered" does not exist., ' +
        'the status of pod readiness gate "team/warm" is not "True", but False',
    });
    const allTrue = conditions.map((c) => ({ ...c, status: "True" as const }));
    allTrue.push({ type: "lb/registered", status: "True" });
    expect(GeneratePodReadyCondition(s, allTrue, [status("a", true)], "Running")).toEqual({
      type: "Ready",
      status: "True",
    });
  });
});

describe("GeneratePodInitializedCondition", () => {
  it("no init containers: True even with no statuses", () => {
    expect(GeneratePodInitializedCondition(spec(["a"]), undefined, "Pending")).toEqual({
      type: "Initialized",
      status: "True",
    });
  });

  it("init containers but no statuses: UnknownContainerStatuses", () => {
    expect(GeneratePodInitializedCondition(spec(["a"], ["i"]), undefined, "Pending").reason).toBe(
      "UnknownContainerStatuses",
    );
  });

  it("names unknown and incomplete init containers; a sidecar is complete once started", () => {
    const s = spec(["a"], ["i1", "i2", "i3"], ["side"]);
    const statuses = [
      status("i1", true),
      status("i2", false),
      status("side", false, false),
      status("a", false, false, false),
    ];
    expect(GeneratePodInitializedCondition(s, statuses, "Pending")).toEqual({
      type: "Initialized",
      status: "False",
      reason: "ContainersNotInitialized",
      message: "containers with unknown status: [i3], containers with incomplete status: [i2 side]",
    });
    const done = [status("i1", true), status("i2", true), status("i3", true), status("side", false, true)];
    expect(GeneratePodInitializedCondition(s, done, "Pending")).toEqual({
      type: "Initialized",
      status: "True",
    });
  });

  it("True once an app container has run, even while a sidecar restarts; PodCompleted when Succeeded", () => {
    const s = spec(["a"], [], ["side"]);
    expect(
      GeneratePodInitializedCondition(s, [status("side", false, false), status("a", true)], "Running"),
    ).toEqual({
      type: "Initialized",
      status: "True",
    });
    expect(GeneratePodInitializedCondition(spec(["a"], ["i"]), [status("i", false)], "Succeeded")).toEqual({
      type: "Initialized",
      status: "True",
      reason: "PodCompleted",
    });
  });
});

describe("GeneratePodReadyToStartContainersCondition", () => {
  const pod: Pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: spec(["a"]) };
  const ready = { state: "SANDBOX_READY" as const, hostNetwork: false, ip: "10.0.0.5" };
  const cond = (
    sandboxStatuses: (typeof ready | { state: "SANDBOX_NOTREADY"; hostNetwork: boolean })[],
    p = pod,
  ) => GeneratePodReadyToStartContainersCondition(p, { sandboxStatuses }).status;

  it("True only with one ready sandbox, on the right network, with an IP", () => {
    expect(cond([ready])).toBe("True");
    expect(cond([])).toBe("False");
    expect(cond([{ state: "SANDBOX_NOTREADY", hostNetwork: false }, ready])).toBe("False");
    expect(cond([ready, ready])).toBe("False");
    expect(cond([{ ...ready, ip: "" }])).toBe("False");
    expect(cond([ready], { ...pod, spec: { ...pod.spec, hostNetwork: true } })).toBe("False");
    expect(
      cond([{ ...ready, hostNetwork: true, ip: "" }], { ...pod, spec: { ...pod.spec, hostNetwork: true } }),
    ).toBe("True");
  });
});
