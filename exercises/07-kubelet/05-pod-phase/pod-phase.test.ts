// Exercise 7.5: your getPhase, first on container statuses written by hand, then inside the real
// generateAPIPodStatus, with the container states coming from the course's real
// KubeGenericRuntimeManager running pods on the fake runtime, on a FakeClock.
import { describe, expect, it } from "vitest";
import type {
  PodStatus as APIPodStatus,
  Container,
  ContainerStatus,
  Pod,
  PodSpec,
} from "../../../code/api/core.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import { generateAPIPodStatus } from "../../../code/kubelet/kubelet-pods.ts";
import { newCrashLoopBackOff } from "../../../code/kubelet/kuberuntime/crash-loop-backoff.ts";
import type { OSInterface } from "../../../code/kubelet/kuberuntime/kuberuntime-container.ts";
import { KubeGenericRuntimeManager } from "../../../code/kubelet/kuberuntime/kuberuntime-manager.ts";
import { ResultsManager } from "../../../code/kubelet/prober/results/results-manager.ts";
import {
  type FakeImageBehaviour,
  FakeImageService,
} from "../../../code/kubelet/runtime/fake-image-service.ts";
import { FakeRuntimeService } from "../../../code/kubelet/runtime/fake-runtime-service.ts";
import { ReasonCache } from "../../../code/kubelet/util/reason-cache.ts";
import { getPhase } from "./pod-phase.ts";

const s = 1000;

describe("getPhase on statuses written by hand", () => {
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
  const pod = (
    restartPolicy: PodSpec["restartPolicy"],
    init: string[] = [],
    sidecars: string[] = [],
  ): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "ns" },
    spec: {
      restartPolicy,
      containers: [{ name: "a" }, { name: "b" }],
      initContainers: [
        ...init.map((name) => ({ name })),
        ...sidecars.map((name) => ({ name, restartPolicy: "Always" as const })),
      ],
    },
  });

  it("never Unknown: a pod whose containers have no status yet is Pending", () => {
    expect(getPhase(pod("Always"), [], false)).toBe("Pending");
    expect(getPhase(pod("Always"), [running("a")], false)).toBe("Pending");
    expect(getPhase(pod("Never"), [running("a"), { ...base, name: "b", state: {} }], false)).toBe("Pending");
  });

  it("all stopped: Always → Running, all exit 0 → Succeeded, Never → Failed, OnFailure → Running", () => {
    const ok = [exited("a", 0), exited("b", 0)];
    const bad = [exited("a", 0), exited("b", 3)];
    expect([getPhase(pod("Always"), ok, false), getPhase(pod("Always"), bad, false)]).toEqual([
      "Running",
      "Running",
    ]);
    expect([getPhase(pod("OnFailure"), ok, false), getPhase(pod("OnFailure"), bad, false)]).toEqual([
      "Succeeded",
      "Running",
    ]);
    expect([getPhase(pod("Never"), ok, false), getPhase(pod("Never"), bad, false)]).toEqual([
      "Succeeded",
      "Failed",
    ]);
  });

  it("init containers: Pending until done; one that failed fails a Never pod at once, and is retried otherwise", () => {
    expect(getPhase(pod("Never", ["i"]), [running("i"), waiting("a"), waiting("b")], false)).toBe("Pending");
    expect(getPhase(pod("Never", ["i"]), [exited("i", 1), waiting("a"), waiting("b")], false)).toBe("Failed");
    expect(getPhase(pod("Never", ["i"]), [waiting("i", 1), waiting("a"), waiting("b")], false)).toBe(
      "Failed",
    );
    expect(getPhase(pod("OnFailure", ["i"]), [waiting("i", 1), waiting("a"), waiting("b")], false)).toBe(
      "Pending",
    );
    expect(getPhase(pod("Always", ["i"]), [exited("i", 0), running("a"), running("b")], false)).toBe(
      "Running",
    );
  });

  it("sidecars: not started holds the pod Pending; a restarting one does not send a running pod back; an exited one decides nothing", () => {
    expect(getPhase(pod("Always", [], ["s"]), [running("s", false), waiting("a"), waiting("b")], false)).toBe(
      "Pending",
    );
    expect(getPhase(pod("Always", [], ["s"]), [waiting("s", 1), running("a"), running("b")], false)).toBe(
      "Running",
    );
    expect(getPhase(pod("Never", [], ["s"]), [exited("s", 143), exited("a", 0), exited("b", 0)], false)).toBe(
      "Succeeded",
    );
  });

  it("a terminal pod takes Succeeded or Failed from its exit codes whatever its restartPolicy — a static pod excepted", () => {
    expect(getPhase(pod("Always"), [exited("a", 0), exited("b", 0)], true)).toBe("Succeeded");
    expect(getPhase(pod("Always"), [exited("a", 0), exited("b", 137)], true)).toBe("Failed");
    const staticPod = pod("Always");
    staticPod.metadata.annotations = { "kubernetes.io/config.source": "file" };
    expect(getPhase(staticPod, [exited("a", 0), exited("b", 137)], true)).toBe("Running");
  });
});

/** In-memory log directories: no real I/O, so only the fake clock moves time. */
const memOS: OSInterface = {
  mkdirAll: async () => {},
  readDir: async () => {
    throw new Error("ENOENT");
  },
};

/** The real runtime manager over the fake runtime; the API status by the real generateAPIPodStatus with your getPhase. */
function node(images: Record<string, FakeImageBehaviour>) {
  const clock = new FakeClock(Date.UTC(2026, 11, 7, 4, 0, 0));
  const imageService = new FakeImageService();
  for (const [name, b] of Object.entries(images)) imageService.register(name, b);
  const runtimeService = new FakeRuntimeService(clock, imageService);
  const manager = new KubeGenericRuntimeManager({
    runtimeService,
    imageService,
    clock,
    recorder: () => {},
    podLogsRootDirectory: "/var/log/pods",
    livenessManager: new ResultsManager(),
    startupManager: new ResultsManager(),
    runtimeName: "fake",
    osInterface: memOS,
  });
  const reasonCache = new ReasonCache();
  const backOff = newCrashLoopBackOff(clock);
  let last: APIPodStatus | undefined;
  const status = async (pod: Pod, podIsTerminal = false) => {
    const now = await manager.getPodStatus("uid-1", "web", "default");
    last = generateAPIPodStatus(pod, now, podIsTerminal, {
      reasonCache,
      clock,
      oldPodStatus: last,
      getPhase,
    });
    return last;
  };

  /** Runs `p` to its end, moving the fake clock from timer to timer (a kill waits for its grace). */
  async function drive<T>(p: Promise<T>): Promise<T> {
    let done = false;
    p.then(
      () => (done = true),
      () => (done = true),
    );
    for (;;) {
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      if (done) return p;
      const next = clock.nextDue();
      if (next === undefined) throw new Error("stuck: nothing left to wait for");
      clock.setTime(next);
    }
  }

  /** One kubelet sync: syncPod, the reason cache, then the API status. */
  const sync = async (pod: Pod) => {
    const before = await manager.getPodStatus("uid-1", "web", "default");
    reasonCache.update("uid-1", await drive(manager.syncPod(pod, before, backOff)));
    return status(pod);
  };
  /** Syncs once a fake second for `seconds`; the phases seen, each once, in order. */
  const phases = async (pod: Pod, seconds: number) => {
    const seen: string[] = [];
    for (let i = 0; i < seconds; i++) {
      const p = (await sync(pod)).phase ?? "";
      if (seen.at(-1) !== p) seen.push(p);
      clock.step(s);
    }
    return seen;
  };
  const kill = async (pod: Pod) => {
    const [running] = await manager.getPods(false);
    await drive(manager.killPod(pod, running));
  };
  return { clock, sync, status, phases, kill };
}

const c = (name: string, image: string, extra: Partial<Container> = {}): Container => ({
  name,
  image,
  imagePullPolicy: "IfNotPresent",
  ...extra,
});
const makePod = (spec: Partial<PodSpec> & Pick<PodSpec, "containers">): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default", uid: "uid-1" },
  spec: { terminationGracePeriodSeconds: 30, nodeName: "node-1", ...spec },
});

describe("inside the real generateAPIPodStatus, over the real runtime manager", () => {
  it("a crash-looping container: the pod stays Running while the container waits in CrashLoopBackOff", async () => {
    const n = node({ "crash:1": { exitAfterMs: 2 * s, exitCode: 1 } });
    const pod = makePod({ containers: [c("app", "crash:1")] });
    expect((await n.status(pod)).phase).toBe("Pending"); // nothing has run yet
    expect(await n.phases(pod, 40)).toEqual(["Running"]);
    const cs = (await n.sync(pod)).containerStatuses?.[0];
    expect([cs?.state?.waiting?.reason, cs?.restartCount]).toEqual(["CrashLoopBackOff", 3]);
  });

  it("an init container that fails under restartPolicy Never fails the pod; its app container never ran", async () => {
    const n = node({ "bad:1": { exitAfterMs: 1 * s, exitCode: 1 }, "web:1": {} });
    const pod = makePod({
      restartPolicy: "Never",
      initContainers: [c("setup", "bad:1")],
      containers: [c("app", "web:1")],
    });
    expect(await n.phases(pod, 5)).toEqual(["Pending", "Failed"]);
  });

  it("an init container that fails under Always is retried: Pending with Init:CrashLoopBackOff, never Running", async () => {
    const n = node({ "bad:1": { exitAfterMs: 1 * s, exitCode: 1 }, "web:1": {} });
    const pod = makePod({ initContainers: [c("setup", "bad:1")], containers: [c("app", "web:1")] });
    expect(await n.phases(pod, 60)).toEqual(["Pending"]);
    expect((await n.sync(pod)).initContainerStatuses?.[0].state?.waiting?.reason).toBe("CrashLoopBackOff");
  });

  it("init containers that succeed: Pending while they run, then Running", async () => {
    const n = node({ "init:1": { exitAfterMs: 2 * s }, "web:1": {} });
    const pod = makePod({
      initContainers: [c("first", "init:1"), c("second", "init:1")],
      containers: [c("app", "web:1")],
    });
    expect(await n.phases(pod, 10)).toEqual(["Pending", "Running"]);
  });

  it("a Job-like pod (Never) whose work exits 0: Succeeded, although the kubelet stopped its sidecar with SIGTERM (143)", async () => {
    const n = node({ "proxy:1": { sigtermExitAfterMs: 0 }, "job:1": { exitAfterMs: 5 * s } });
    const pod = makePod({
      restartPolicy: "Never",
      initContainers: [c("proxy", "proxy:1", { restartPolicy: "Always" })],
      containers: [c("app", "job:1")],
    });
    expect(await n.phases(pod, 10)).toEqual(["Pending", "Running", "Succeeded"]);
    expect((await n.status(pod)).initContainerStatuses?.[0].state?.terminated?.exitCode).toBe(143);
  });

  it("restartPolicy decides a finished container: Never + exit 1 → Failed, OnFailure + exit 0 → Succeeded, Always → Running", async () => {
    const cases = [
      ["Never", 1, "Failed"],
      ["OnFailure", 0, "Succeeded"],
      ["Always", 0, "Running"],
    ] as const;
    for (const [restartPolicy, exitCode, phase] of cases) {
      const n = node({ "job:1": { exitAfterMs: 3 * s, exitCode } });
      const seen = await n.phases(makePod({ restartPolicy, containers: [c("app", "job:1")] }), 10);
      expect(seen.at(-1), `${restartPolicy}, exit ${exitCode}`).toBe(phase);
    }
  });

  it("a pod the kubelet has finished with (deleted, its containers killed) is terminal: Failed, even under Always", async () => {
    const n = node({ "web:1": { sigtermExitAfterMs: 0 } });
    const pod = makePod({ containers: [c("app", "web:1")] });
    expect(await n.phases(pod, 3)).toEqual(["Running"]);
    await n.kill(pod);
    expect((await n.status(pod, true)).phase).toBe("Failed");
  });
});
