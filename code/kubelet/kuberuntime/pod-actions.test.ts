import { describe, expect, it } from "vitest";
import type { Container, Pod } from "../../api/core.ts";
import type { PodStatus, Status } from "../container/runtime.ts";
import { ResultsManager } from "../prober/results/results-manager.ts";
import type { PodSandboxStatus } from "../runtime/cri.ts";
import { hashContainer } from "./labels.ts";
import { computePodActions } from "./pod-actions.ts";

const probes = () => ({ livenessManager: new ResultsManager(), startupManager: new ResultsManager() });
const app: Container = { name: "app", image: "web:1" };
const sidecar: Container = { name: "proxy", image: "proxy:1", restartPolicy: "Always" };
const initC: Container = { name: "setup", image: "init:1" };
const pod = (extra: Partial<Pod["spec"]> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default", uid: "u" },
  spec: { containers: [app], ...extra },
});

const sandbox = (state: PodSandboxStatus["state"], attempt = 0): PodSandboxStatus => ({
  id: `sb${attempt}`,
  metadata: { name: "web", namespace: "default", uid: "u", attempt },
  state,
  createdAt: 0,
  labels: {},
  annotations: {},
  runtimeHandler: "",
  network: { ip: "10.88.0.1" },
});

const status = (c: Container, state: Status["state"], exitCode = 0): Status => ({
  id: { type: "fake", id: `${c.name}-${state}` },
  name: c.name,
  state,
  createdAt: 0,
  startedAt: 0,
  finishedAt: 0,
  exitCode,
  image: c.image ?? "",
  imageID: "",
  imageRef: "",
  hash: hashContainer(c),
  restartCount: 0,
  reason: "",
  message: "",
});

const ps = (containerStatuses: Status[], sandboxes = [sandbox("SANDBOX_READY")]): PodStatus => ({
  id: "u",
  name: "web",
  namespace: "default",
  ips: [],
  containerStatuses,
  sandboxStatuses: sandboxes,
  timeStamp: 0,
});

describe("computePodActions", () => {
  it("a dead sandbox: kill the pod, make attempt 1, start from the first init container", () => {
    const a = computePodActions(
      pod({ initContainers: [initC] }),
      ps([status(initC, "exited"), status(app, "exited")], [sandbox("SANDBOX_NOTREADY")]),
      probes(),
    );
    expect(a).toMatchObject({
      killPod: true,
      createSandbox: true,
      attempt: 1,
      sandboxID: "sb0",
      initContainersToStart: [0],
    });
    expect(a.containersToStart).toEqual([]);
  });

  it("a dead sandbox of a restartPolicy Never pod that already ran: kill only, no new sandbox", () => {
    const a = computePodActions(
      pod({ restartPolicy: "Never" }),
      ps([status(app, "exited")], [sandbox("SANDBOX_NOTREADY")]),
      probes(),
    );
    expect(a).toMatchObject({ killPod: true, createSandbox: false });
  });

  it("all app containers exited under Never: kill the pod (nothing to keep or start)", () => {
    const a = computePodActions(pod({ restartPolicy: "Never" }), ps([status(app, "exited", 1)]), probes());
    expect(a.killPod).toBe(true);
    expect(a.containersToStart).toEqual([]);
  });

  it("a startup probe failure kills and restarts the container with reason StartupProbe", () => {
    const pr = probes();
    const s = status(app, "running");
    pr.startupManager.set("fake://app-running", "Failure", pod());
    const a = computePodActions(pod(), ps([s]), pr);
    expect(a.containersToStart).toEqual([0]);
    expect([...a.containersToKill.values()]).toMatchObject([
      {
        name: "app",
        reason: "StartupProbe",
        message: "Container app failed startup probe, will be restarted",
      },
    ]);
  });

  it("a liveness failure under restartPolicy Never kills without restarting", () => {
    const pr = probes();
    pr.livenessManager.set("fake://app-running", "Failure", pod());
    const a = computePodActions(pod({ restartPolicy: "Never" }), ps([status(app, "running")]), pr);
    expect(a.containersToStart).toEqual([]);
    expect([...a.containersToKill.values()][0].message).toBe("Container app failed liveness probe");
  });

  it("a sidecar counts as done once running: the next init container (then the apps) may start", () => {
    const p = pod({ initContainers: [sidecar, initC] });
    expect(computePodActions(p, ps([]), probes()).initContainersToStart).toEqual([0]);
    const running = computePodActions(p, ps([status(sidecar, "running")]), probes());
    expect(running.initContainersToStart).toEqual([1]);
    expect(running.containersToStart).toEqual([]);
    const done = computePodActions(p, ps([status(initC, "exited"), status(sidecar, "running")]), probes());
    expect(done.initContainersToStart).toEqual([]);
    expect(done.containersToStart).toEqual([0]);
  });

  it("a sidecar that stopped after initialization is restarted beside the running app", () => {
    const p = pod({ initContainers: [sidecar] });
    const a = computePodActions(p, ps([status(app, "running"), status(sidecar, "exited", 1)]), probes());
    expect(a.initContainersToStart).toEqual([0]);
    expect(a.containersToStart).toEqual([]);
    expect(a.killPod).toBe(false);
  });
});
