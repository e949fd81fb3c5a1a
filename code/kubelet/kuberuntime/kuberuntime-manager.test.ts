import { describe, expect, it } from "vitest";
import type { PodStatus as APIPodStatus, Container, Pod } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { generateAPIPodStatus } from "../kubelet-pods.ts";
import { ResultsManager } from "../prober/results/results-manager.ts";
import { type FakeImageBehaviour, FakeImageService } from "../runtime/fake-image-service.ts";
import { FakeRuntimeService } from "../runtime/fake-runtime-service.ts";
import { ReasonCache } from "../util/reason-cache.ts";
import { newCrashLoopBackOff } from "./crash-loop-backoff.ts";
import type { OSInterface } from "./kuberuntime-container.ts";
import { KubeGenericRuntimeManager } from "./kuberuntime-manager.ts";

const s = 1000;
const T0 = 1_700_000_000_000;

/** An in-memory file system: no real I/O, so only the fake clock moves time. */
const memOS: OSInterface = {
  mkdirAll: async () => {},
  readDir: async () => {
    throw new Error("ENOENT");
  },
};

/** Lets every pending promise chain run (the fake runtime and the manager only use microtasks). */
const settle = async () => {
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
};

interface Event {
  at: number;
  type: string;
  reason: string;
  message: string;
}

function setup(images: Record<string, FakeImageBehaviour> = {}) {
  const clock = new FakeClock(T0);
  const imageService = new FakeImageService();
  for (const [name, b] of Object.entries(images)) imageService.register(name, b);
  const runtimeService = new FakeRuntimeService(clock, imageService);
  const events: Event[] = [];
  const livenessManager = new ResultsManager();
  const startupManager = new ResultsManager();
  const manager = new KubeGenericRuntimeManager({
    runtimeService,
    imageService,
    clock,
    recorder: (_obj, type, reason, message) => events.push({ at: clock.now(), type, reason, message }),
    podLogsRootDirectory: "/var/log/pods",
    livenessManager,
    startupManager,
    runtimeName: "fake",
    osInterface: memOS,
  });
  const reasonCache = new ReasonCache();
  const backOff = newCrashLoopBackOff(clock);
  let last: APIPodStatus | undefined;

  /** Runs `p`, moving the fake clock from timer to timer until it settles. */
  async function drive<T>(p: Promise<T>, maxMs = 3_600 * s): Promise<T> {
    let done = false;
    p.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    const until = clock.now() + maxMs;
    for (;;) {
      await settle();
      if (done) return p;
      const next = clock.nextDue();
      if (next === undefined || next > until) throw new Error("stuck: nothing left to wait for");
      clock.setTime(next);
    }
  }

  /** One kubelet sync, as the kubelet's SyncPod does it: status, syncPod, reason cache, API status. */
  async function sync(pod: Pod) {
    const uid = pod.metadata.uid ?? "";
    const before = await manager.getPodStatus(uid, pod.metadata.name ?? "", pod.metadata.namespace ?? "");
    const result = await drive(manager.syncPod(pod, before, backOff));
    reasonCache.update(uid, result);
    const after = await manager.getPodStatus(uid, pod.metadata.name ?? "", pod.metadata.namespace ?? "");
    last = generateAPIPodStatus(pod, after, false, {
      reasonCache,
      clock,
      oldPodStatus: last,
      nodeIPs: ["192.168.1.10"],
    });
    return { result, status: last, podStatus: after };
  }

  return {
    clock,
    imageService,
    runtimeService,
    manager,
    events,
    livenessManager,
    startupManager,
    drive,
    sync,
  };
}

function makePod(containers: Container[], extra: Partial<Pod["spec"]> = {}): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default", uid: "uid-1" },
    spec: { containers, terminationGracePeriodSeconds: 30, nodeName: "node-1", ...extra },
  };
}

const app = (image: string, extra: Partial<Container> = {}): Container => ({
  name: "app",
  image,
  imagePullPolicy: "IfNotPresent",
  ...extra,
});

const reasons = (events: Event[]) => events.map((e) => e.reason);

describe("KubeGenericRuntimeManager: a pod comes up", () => {
  it("creates a sandbox, pulls, creates and starts the container; the status goes ContainerCreating → Running", async () => {
    const h = setup({ "web:1": { size: 1234 } });
    const pod = makePod([app("web:1", { ports: [{ containerPort: 8080 }] })]);

    // Before any sync the API status says what the kubelet will report for a container with no runtime state.
    const empty = generateAPIPodStatus(
      pod,
      {
        id: "uid-1",
        name: "web",
        namespace: "default",
        ips: [],
        containerStatuses: [],
        sandboxStatuses: [],
        timeStamp: 0,
      },
      false,
      { reasonCache: new ReasonCache(), clock: h.clock },
    );
    expect(empty.phase).toBe("Pending");
    expect(empty.containerStatuses?.[0].state).toEqual({ waiting: { reason: "ContainerCreating" } });
    expect(empty.conditions?.find((c) => c.type === "PodReadyToStartContainers")?.status).toBe("False");

    const { result, status, podStatus } = await h.sync(pod);
    // A new pod is "killed" first (there is nothing to stop), as upstream's SyncPod does.
    expect(result.syncResults.map((r) => [r.action, r.error])).toEqual([
      ["KillPodSandbox", ""],
      ["CreatePodSandbox", ""],
      ["ConfigPodSandbox", ""],
      ["StartContainer", ""],
    ]);
    expect(status.phase).toBe("Running");
    expect(status.podIP).toBe(podStatus.ips[0]);
    expect(status.podIP).toMatch(/^10\.88\./);
    expect(status.podIPs).toEqual([{ ip: status.podIP }]);
    expect(status.hostIP).toBe("192.168.1.10");
    const cs = status.containerStatuses?.[0];
    expect(cs?.state?.running?.startedAt).toBe(new Date(T0).toISOString().replace(".000Z", "Z"));
    expect(cs?.containerID).toMatch(/^fake:\/\/[0-9a-f]{64}$/);
    expect(cs?.restartCount).toBe(0);
    expect(cs?.imageID).toMatch(/^sha256:/);
    expect(cs?.ready).toBe(false); // the prober manager's to set
    expect(status.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      "PodReadyToStartContainers=True",
      "Initialized=True",
      "Ready=False",
      "ContainersReady=False",
      "PodScheduled=True",
    ]);
    expect(h.events.map((e) => `${e.reason}: ${e.message}`)).toEqual([
      'Pulling: Pulling image "web:1"',
      'Pulled: Successfully pulled image "web:1" in 0s (0s including waiting). Image size: 1234 bytes.',
      "Created: Created container app",
      "Started: Started container app",
    ]);

    // The sandbox and container carry the kubelet's labels, annotations and paths.
    const [sandbox] = await h.runtimeService.ListPodSandbox();
    expect(sandbox.metadata).toEqual({ name: "web", namespace: "default", uid: "uid-1", attempt: 0 });
    expect(sandbox.labels["io.kubernetes.pod.uid"]).toBe("uid-1");
    const [c] = await h.runtimeService.ListContainers();
    const full = await h.runtimeService.ContainerStatus(c.id);
    expect(full.logPath).toBe("app/0.log");
    expect(full.annotations["io.kubernetes.container.restartCount"]).toBe("0");
    expect(full.annotations["io.kubernetes.pod.terminationGracePeriod"]).toBe("30");
    expect(full.annotations["io.kubernetes.container.ports"]).toBe('[{"containerPort":8080}]');

    // A second sync changes nothing.
    const again = await h.sync(pod);
    expect(again.result.syncResults.map((r) => r.action)).toEqual(["ConfigPodSandbox"]);
  });

  it("passes command, args, env (values and downward API), workingDir and the memory limit to the runtime", async () => {
    const h = setup({ "web:1": {} });
    const created: unknown[] = [];
    const orig = h.runtimeService.CreateContainer.bind(h.runtimeService);
    h.runtimeService.CreateContainer = async (id, config, sandboxConfig) => {
      created.push({ config, sandboxConfig });
      return orig(id, config, sandboxConfig);
    };
    const pod = makePod([
      app("web:1", {
        command: ["/web"],
        args: ["--port=8080"],
        workingDir: "/srv",
        ports: [{ containerPort: 8080, name: "http" }],
        resources: { limits: { memory: "64Mi" } },
        env: [
          { name: "GREETING", value: "hi" },
          { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
          { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
          { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
          { name: "MSG", value: "$(GREETING) from $(POD_NAME), $$(GREETING)" },
        ],
      }),
    ]);
    const { podStatus } = await h.sync(pod);
    const { config, sandboxConfig } = created[0] as {
      config: import("../runtime/cri.ts").ContainerConfig;
      sandboxConfig: import("../runtime/cri.ts").PodSandboxConfig;
    };
    expect(config.command).toEqual(["/web"]);
    expect(config.args).toEqual(["--port=8080"]);
    expect(config.workingDir).toBe("/srv");
    expect(config.linux?.resources?.memoryLimitInBytes).toBe(64 * 1024 * 1024);
    expect(config.envs).toEqual([
      { key: "GREETING", value: "hi" },
      { key: "POD_NAME", value: "web" },
      { key: "POD_NAMESPACE", value: "default" },
      { key: "POD_IP", value: podStatus.ips[0] },
      { key: "NODE_NAME", value: "node-1" },
      { key: "MSG", value: "hi from web, $(GREETING)" },
    ]);
    expect(sandboxConfig.logDirectory).toBe("/var/log/pods/default_web_uid-1");
    expect(sandboxConfig.hostname).toBe("web");
    expect(sandboxConfig.portMappings).toEqual([{ protocol: "TCP", containerPort: 8080 }]);
  });

  it("fails a container whose ConfigMap reference cannot be resolved with CreateContainerConfigError", async () => {
    const h = setup({ "web:1": {} });
    const pod = makePod([
      app("web:1", { env: [{ name: "X", valueFrom: { configMapKeyRef: { name: "cfg", key: "x" } } }] }),
    ]);
    const { status } = await h.sync(pod);
    expect(status.containerStatuses?.[0].state).toEqual({
      waiting: {
        reason: "CreateContainerConfigError",
        message: "couldn't get configMap default/cfg, no kubeClient defined",
      },
    });
  });
});

describe("KubeGenericRuntimeManager: restartPolicy and exit codes", () => {
  async function runToExit(restartPolicy: "Always" | "OnFailure" | "Never", exitCode: number) {
    const h = setup({ "job:1": { exitAfterMs: 2 * s, exitCode } });
    const pod = makePod([app("job:1")], { restartPolicy });
    await h.sync(pod);
    h.clock.step(3 * s);
    return { h, pod, ...(await h.sync(pod)) };
  }

  it("Never + exit 0: Succeeded, terminated Completed, not restarted", async () => {
    const { status, result } = await runToExit("Never", 0);
    expect(status.phase).toBe("Succeeded");
    const t = status.containerStatuses?.[0].state?.terminated;
    expect(t).toMatchObject({ exitCode: 0, reason: "Completed" });
    expect(t?.containerID).toBe(status.containerStatuses?.[0].containerID);
    expect(Date.parse(t?.finishedAt ?? "") - Date.parse(t?.startedAt ?? "")).toBe(2 * s);
    expect(result.syncResults.some((r) => r.action === "StartContainer")).toBe(false);
  });

  it("Never + exit 1: Failed, terminated Error, not restarted", async () => {
    const { status } = await runToExit("Never", 1);
    expect(status.phase).toBe("Failed");
    expect(status.containerStatuses?.[0].state?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(status.containerStatuses?.[0].restartCount).toBe(0);
  });

  it("OnFailure + exit 0: Succeeded; OnFailure + exit 1: restarted, lastState terminated, restartCount 1", async () => {
    expect((await runToExit("OnFailure", 0)).status.phase).toBe("Succeeded");
    const { status } = await runToExit("OnFailure", 1);
    const cs = status.containerStatuses?.[0];
    expect(status.phase).toBe("Running");
    expect(cs?.restartCount).toBe(1);
    expect(cs?.state?.running).toBeDefined();
    expect(cs?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
  });

  it("Always + exit 0: restarted too (restartCount 1, lastState Completed)", async () => {
    const { status } = await runToExit("Always", 0);
    const cs = status.containerStatuses?.[0];
    expect(cs?.restartCount).toBe(1);
    expect(cs?.lastState?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
  });
});

describe("KubeGenericRuntimeManager: CrashLoopBackOff", () => {
  it("restarts a crashing container at once, then after 10, 20, 40, 80, 160, 300, 300 s, showing CrashLoopBackOff meanwhile", async () => {
    const h = setup({ "crash:1": { exitAfterMs: 0, exitCode: 1 } });
    const pod = makePod([app("crash:1")]);
    const starts: number[] = [];
    let lastRestartCount = -1;
    let sawBackOff: APIPodStatus | undefined;
    // A kubelet resyncs about every second; so do we, for 20 minutes of fake time.
    for (let t = 0; t < 1200; t++) {
      const { status } = await h.sync(pod);
      const cs = status.containerStatuses?.[0];
      if (cs && cs.restartCount !== lastRestartCount) {
        lastRestartCount = cs.restartCount;
        starts.push(h.clock.now());
      }
      if (!sawBackOff && cs?.state?.waiting?.reason === "CrashLoopBackOff" && cs.restartCount === 2)
        sawBackOff = status;
      h.clock.step(s);
    }
    // The container runs for no time, so start-to-start is exit-to-restart. The first restart
    // has no backoff yet: it happens at the next sync, one second (our sync period) later.
    const waits = starts.slice(1).map((t, i) => (t - starts[i]) / s);
    expect(waits.slice(0, 8)).toEqual([1, 10, 20, 40, 80, 160, 300, 300]);
    const cs = sawBackOff?.containerStatuses?.[0];
    expect(cs?.state?.waiting?.message).toBe(
      "back-off 20s restarting failed container=app pod=web_default(uid-1)",
    );
    expect(cs?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(sawBackOff?.phase).toBe("Running");
    const backOff = h.events.find((e) => e.reason === "BackOff");
    expect(backOff).toMatchObject({
      type: "Warning",
      message: "Back-off restarting failed container app in pod web_default(uid-1)",
    });
  });

  it("garbage collection keeps only the newest exited container, and lastState still shows", async () => {
    const h = setup({ "crash:1": { exitAfterMs: 0, exitCode: 1 } });
    const pod = makePod([app("crash:1")]);
    for (let t = 0; t < 100; t++) {
      await h.sync(pod);
      h.clock.step(s);
    }
    const before = (await h.runtimeService.ListContainers()).length;
    expect(before).toBe(5); // restarts at 0, 1, 11, 31, 71 s
    const removed = await h.manager.garbageCollect();
    expect(removed).toHaveLength(before - 1);
    const { status } = await h.sync(pod);
    expect(status.containerStatuses?.[0].restartCount).toBe(4);
    expect(status.containerStatuses?.[0].state?.waiting?.reason).toBe("CrashLoopBackOff");
    expect(status.containerStatuses?.[0].state?.waiting?.message).toContain("back-off 1m20s");
    expect(status.containerStatuses?.[0].lastState?.terminated?.exitCode).toBe(1);
    expect(await h.manager.garbageCollect(undefined, () => true)).toHaveLength(1);
  });

  it("starts over at no wait after a run of more than 10 minutes", async () => {
    const h = setup({ "crash:1": { exitAfterMs: 0, exitCode: 1 } });
    const pod = makePod([app("crash:1")]);
    // Crash loop until the backoff is at 40 s (three restarts).
    while (((await h.sync(pod)).status.containerStatuses?.[0].restartCount ?? 0) < 3) h.clock.step(s);
    // Now the image runs 11 minutes before it crashes.
    h.imageService.register("crash:1", { exitAfterMs: 660 * s, exitCode: 1 });
    h.clock.step(40 * s);
    expect((await h.sync(pod)).status.containerStatuses?.[0].restartCount).toBe(4);
    h.clock.step(661 * s);
    await h.sync(pod); // it crashed a second ago: restarted at once, no back-off
    const { status } = await h.sync(pod);
    expect(status.containerStatuses?.[0].restartCount).toBe(5);
  });
});

describe("KubeGenericRuntimeManager: probes and killing", () => {
  it("kills a container whose liveness probe failed, with the probe's grace period, and starts it again", async () => {
    // The image ignores SIGTERM, so only the SIGKILL at the end of the grace period stops it.
    const h = setup({ "web:1": {} });
    const pod = makePod([
      app("web:1", { livenessProbe: { exec: { command: ["true"] }, terminationGracePeriodSeconds: 5 } }),
    ]);
    const first = await h.sync(pod);
    const id = first.status.containerStatuses?.[0].containerID ?? "";
    h.livenessManager.set(id, "Failure", pod);
    const t0 = h.clock.now();
    const { result, status } = await h.sync(pod);
    expect(result.syncResults.map((r) => r.action)).toEqual([
      "KillContainer",
      "ConfigPodSandbox",
      "StartContainer",
    ]);
    const cs = status.containerStatuses?.[0];
    expect(cs?.restartCount).toBe(1);
    expect(cs?.containerID).not.toBe(id);
    expect(cs?.lastState?.terminated?.exitCode).toBe(137);
    // Killed 5 s (the probe's grace) after the kill began, not 30 s (the pod's).
    expect(Date.parse(cs?.lastState?.terminated?.finishedAt ?? "") - t0).toBe(5 * s);
    expect(h.events.find((e) => e.reason === "Killing")?.message).toBe(
      "Container app failed liveness probe, will be restarted",
    );
  });

  it("recreates a running container whose image changed, whatever the restartPolicy", async () => {
    const h = setup({ "web:1": {}, "web:2": {} });
    await h.sync(makePod([app("web:1")], { restartPolicy: "Never" }));
    const { status } = await h.sync(makePod([app("web:2")], { restartPolicy: "Never" }));
    expect(status.containerStatuses?.[0].image).toBe("web:2");
    expect(status.containerStatuses?.[0].restartCount).toBe(1);
    expect(h.events.find((e) => e.reason === "Killing")?.message).toBe(
      "Container app definition changed, will be restarted",
    );
  });

  async function killWith(behaviour: FakeImageBehaviour, container: Partial<Container>, grace = 30) {
    const h = setup({ "web:1": behaviour });
    const pod = makePod([app("web:1", container)], { terminationGracePeriodSeconds: grace });
    await h.sync(pod);
    const running = (await h.manager.getPods(false))[0];
    const t0 = h.clock.now();
    await h.drive(h.manager.killPod(pod, running));
    const ps = await h.manager.getPodStatus("uid-1", "web", "default");
    const c = ps.containerStatuses[0];
    return { h, c, after: c.finishedAt - t0, ps };
  }

  it("killPod: SIGTERM ends a process that handles it (exit 143)", async () => {
    const { c, after, ps, h } = await killWith({ sigtermExitAfterMs: 1 * s }, {});
    expect(c.exitCode).toBe(143);
    expect(after).toBe(1 * s);
    expect(ps.sandboxStatuses[0].state).toBe("SANDBOX_NOTREADY");
    expect(h.events.filter((e) => e.reason === "Killing").map((e) => e.message)).toEqual([
      "Stopping container app",
    ]);
  });

  it("killPod: a process that ignores SIGTERM gets SIGKILL after the grace period (exit 137)", async () => {
    const { c, after } = await killWith({}, {}, 30);
    expect(c.exitCode).toBe(137);
    expect(after).toBe(30 * s);
  });

  it("killPod: the preStop hook runs first and its time counts against the grace period", async () => {
    const { c, after, h } = await killWith({}, { lifecycle: { preStop: { sleep: { seconds: 5 } } } }, 30);
    expect(c.exitCode).toBe(137);
    expect(after).toBe(30 * s); // 5 s of hook + 25 s after SIGTERM
    expect(reasons(h.events).filter((r) => r === "FailedPreStopHook")).toEqual([]);
  });

  it("killPod: a hook longer than the grace period is cut off, and SIGTERM still gets the 2 s minimum", async () => {
    const { c, after } = await killWith({}, { lifecycle: { preStop: { sleep: { seconds: 40 } } } }, 10);
    expect(c.exitCode).toBe(137);
    expect(after).toBe(12 * s);
  });

  it("killPod: an exec preStop runs in the container through ExecSync; a failing one is a Warning event", async () => {
    const ok = await killWith(
      { sigtermExitAfterMs: 0, exec: { "/drain": { exitCode: 0 } } },
      { lifecycle: { preStop: { exec: { command: ["/drain"] } } } },
    );
    expect(reasons(ok.h.events)).not.toContain("FailedPreStopHook");
    const bad = await killWith(
      { sigtermExitAfterMs: 0 },
      { lifecycle: { preStop: { exec: { command: ["/drain"] } } } },
    );
    expect(bad.h.events.find((e) => e.reason === "FailedPreStopHook")).toMatchObject({
      type: "Warning",
      message: "PreStopHook failed",
    });
  });

  it("a failing postStart hook kills the container and reports PostStartHookError", async () => {
    const h = setup({ "web:1": { sigtermExitAfterMs: 0 } });
    const pod = makePod([app("web:1", { lifecycle: { postStart: { exec: { command: ["/warm-up"] } } } })]);
    const { result, status } = await h.sync(pod);
    const start = result.syncResults.find((r) => r.action === "StartContainer");
    expect(start?.error).toBe("PostStartHookError");
    expect(start?.message).toBe(
      'Exec lifecycle hook ([/warm-up]) for Container "app" in Pod "web_default(uid-1)" failed - error: command \'/warm-up\' exited with 127: /warm-up: not found, message: "/warm-up: not found"',
    );
    expect(h.events.find((e) => e.reason === "FailedPostStartHook")?.message).toBe("PostStartHook failed");
    expect(status.containerStatuses?.[0].state?.waiting?.reason).toBe("PostStartHookError");
    expect(status.containerStatuses?.[0].lastState?.terminated?.exitCode).toBe(143);
  });

  it("removeTerminatedPod removes the pod's containers and sandboxes", async () => {
    const { h } = await killWith({}, {});
    await h.manager.removeTerminatedPod("uid-1");
    expect(await h.runtimeService.ListContainers()).toEqual([]);
    expect(await h.runtimeService.ListPodSandbox()).toEqual([]);
    expect(await h.manager.getPods(true)).toEqual([]);
  });

  it("kills a pod it no longer knows from what is written on its containers", async () => {
    const h = setup({ "web:1": {} });
    const pod = makePod([app("web:1")], { terminationGracePeriodSeconds: 7 });
    await h.sync(pod);
    const [running] = await h.manager.getPods(false);
    expect(running).toMatchObject({ id: "uid-1", name: "web", namespace: "default" });
    const t0 = h.clock.now();
    await h.drive(h.manager.killPod(undefined, running));
    const c = (await h.manager.getPodStatus("uid-1", "web", "default")).containerStatuses[0];
    expect(c.finishedAt - t0).toBe(7 * s);
  });
});

describe("KubeGenericRuntimeManager: init containers", () => {
  const init = (name: string, image: string): Container => ({ name, image, imagePullPolicy: "IfNotPresent" });

  it("runs init containers one at a time, in order, then the app containers", async () => {
    const h = setup({ "init:1": { exitAfterMs: 2 * s }, "web:1": {} });
    const pod = makePod([app("web:1")], {
      initContainers: [init("first", "init:1"), init("second", "init:1")],
    });
    const started = (r: Awaited<ReturnType<typeof h.sync>>) =>
      r.result.syncResults.filter((x) => x.action === "StartContainer").map((x) => x.target);

    let r = await h.sync(pod);
    expect(started(r)).toEqual(["first"]);
    expect(r.status.phase).toBe("Pending");
    expect(r.status.containerStatuses?.[0].state?.waiting?.reason).toBe("PodInitializing");
    expect(r.status.conditions?.find((c) => c.type === "Initialized")).toMatchObject({
      status: "False",
      reason: "ContainersNotInitialized",
    });
    h.clock.step(1 * s);
    expect(started(await h.sync(pod))).toEqual([]); // first still running
    h.clock.step(1 * s);
    expect(started(await h.sync(pod))).toEqual(["second"]);
    h.clock.step(2 * s);
    r = await h.sync(pod);
    expect(started(r)).toEqual(["app"]);
    expect(r.status.phase).toBe("Running");
    expect(r.status.initContainerStatuses?.map((c) => [c.name, c.state?.terminated?.reason])).toEqual([
      ["first", "Completed"],
      ["second", "Completed"],
    ]);
    expect(started(await h.sync(pod))).toEqual([]);
  });

  it("restarts a failed init container (restartPolicy Always), through the crash-loop backoff", async () => {
    const h = setup({ "bad:1": { exitAfterMs: 1 * s, exitCode: 1 }, "web:1": {} });
    const pod = makePod([app("web:1")], { initContainers: [init("setup", "bad:1")] });
    await h.sync(pod);
    h.clock.step(1 * s);
    const r = await h.sync(pod);
    expect(r.result.syncResults.find((x) => x.action === "StartContainer")).toMatchObject({
      target: "setup",
      error: "",
    });
    expect(r.status.initContainerStatuses?.[0].restartCount).toBe(1);
    expect(r.status.initContainerStatuses?.[0].lastState?.terminated?.exitCode).toBe(1);
    h.clock.step(1 * s);
    const again = await h.sync(pod);
    expect(again.status.initContainerStatuses?.[0].state?.waiting?.reason).toBe("CrashLoopBackOff");
    expect(again.status.phase).toBe("Pending");
  });

  it("starts a sidecar, then the app beside it; when the app of a Never pod is done, the sidecar is stopped too", async () => {
    const h = setup({ "proxy:1": { sigtermExitAfterMs: 0 }, "job:1": { exitAfterMs: 5 * s } });
    const sidecar: Container = {
      name: "proxy",
      image: "proxy:1",
      imagePullPolicy: "IfNotPresent",
      restartPolicy: "Always",
    };
    const pod = makePod([app("job:1")], { restartPolicy: "Never", initContainers: [sidecar] });
    const started = (r: Awaited<ReturnType<typeof h.sync>>) =>
      r.result.syncResults.filter((x) => x.action === "StartContainer").map((x) => x.target);
    expect(started(await h.sync(pod))).toEqual(["proxy"]);
    expect(started(await h.sync(pod))).toEqual(["app"]);
    h.clock.step(5 * s);
    const { status, result } = await h.sync(pod);
    expect(result.syncResults.map((x) => x.action)).toContain("KillPodSandbox");
    expect(status.phase).toBe("Succeeded");
    expect(status.initContainerStatuses?.[0].state?.terminated?.exitCode).toBe(143);
  });

  it("killPod stops the sidecar only after the app container has exited", async () => {
    // The app ignores SIGTERM (SIGKILL after 10 s); the sidecar would stop at once on SIGTERM.
    const h = setup({ "proxy:1": { sigtermExitAfterMs: 0 }, "web:1": {} });
    const sidecar: Container = {
      name: "proxy",
      image: "proxy:1",
      imagePullPolicy: "IfNotPresent",
      restartPolicy: "Always",
    };
    const pod = makePod([app("web:1")], { initContainers: [sidecar], terminationGracePeriodSeconds: 10 });
    await h.sync(pod);
    await h.sync(pod);
    const [running] = await h.manager.getPods(false);
    expect(running.containers.map((c) => c.name).sort()).toEqual(["app", "proxy"]);
    const t0 = h.clock.now();
    await h.drive(h.manager.killPod(pod, running));
    const ps = await h.manager.getPodStatus("uid-1", "web", "default");
    const byName = Object.fromEntries(ps.containerStatuses.map((c) => [c.name, c]));
    expect([byName.app.exitCode, byName.app.finishedAt - t0]).toEqual([137, 10 * s]);
    // It waited its turn (10 s) and then had the 2 s minimum for SIGTERM, which it obeys at once.
    expect([byName.proxy.exitCode, byName.proxy.finishedAt - t0]).toEqual([143, 10 * s]);
  });

  it("fails the pod when an init container fails under restartPolicy Never", async () => {
    const h = setup({ "bad:1": { exitAfterMs: 1 * s, exitCode: 1 }, "web:1": {} });
    const pod = makePod([app("web:1")], { restartPolicy: "Never", initContainers: [init("setup", "bad:1")] });
    await h.sync(pod);
    h.clock.step(1 * s);
    const { result, status, podStatus } = await h.sync(pod);
    expect(result.syncResults.map((x) => x.action)).not.toContain("StartContainer");
    expect(result.syncResults.map((x) => x.action)).toContain("KillPodSandbox");
    expect(status.phase).toBe("Failed");
    expect(status.initContainerStatuses?.[0].state?.terminated).toMatchObject({
      exitCode: 1,
      reason: "Error",
    });
    expect(podStatus.sandboxStatuses[0].state).toBe("SANDBOX_NOTREADY");
    // And it stays so: no new sandbox for a pod that must not restart.
    expect((await h.sync(pod)).result.syncResults.map((x) => x.action)).not.toContain("CreatePodSandbox");
  });
});

describe("KubeGenericRuntimeManager: images", () => {
  it("an unknown image: ErrImagePull, then ImagePullBackOff until the 10 s backoff has passed, then 20 s", async () => {
    const h = setup({});
    const pod = makePod([app("nope:1")]);
    const waiting = async () => (await h.sync(pod)).status.containerStatuses?.[0].state?.waiting;

    const first = await waiting();
    expect(first?.reason).toBe("ErrImagePull");
    expect(first?.message).toContain('failed to pull and unpack image "nope:1"');
    h.clock.step(5 * s);
    expect(await waiting()).toEqual({
      reason: "ImagePullBackOff",
      message: 'Back-off pulling image "nope:1"',
    });
    h.clock.step(5 * s);
    expect((await waiting())?.reason).toBe("ErrImagePull");
    h.clock.step(19 * s);
    expect((await waiting())?.reason).toBe("ImagePullBackOff");
    h.clock.step(1 * s);
    expect((await waiting())?.reason).toBe("ErrImagePull");
    expect(h.imageService.pulls).toEqual(["nope:1", "nope:1", "nope:1"]);
    expect(h.events.filter((e) => e.type === "Warning").map((e) => `${e.reason}: ${e.message}`)).toContain(
      "Failed: Error: ErrImagePull",
    );
    expect(h.events.filter((e) => e.type === "Warning").map((e) => `${e.reason}: ${e.message}`)).toContain(
      "Failed: Error: ImagePullBackOff",
    );

    // Once the image exists, the next try after the backoff pulls it and the container runs.
    h.imageService.register("nope:1", {});
    h.clock.step(40 * s);
    const { status } = await h.sync(pod);
    expect(status.containerStatuses?.[0].state?.running).toBeDefined();
  });
});
