// Exercise 7.3: your isPodStatusByKubeletEqual as a table, then inside the course's real
// StatusManager (code/kubelet/status/status-manager.ts) running its own loop on a fake clock,
// against a fake API server that applies its patches and counts its requests — a pod synced over
// and over, another writer's condition, a probe verdict followed by a sync, a message that
// changes under a steady status, a restart, and a server copy that drifted.
import { describe, expect, it } from "vitest";
import type { ContainerStatus, Pod, PodCondition, PodStatus } from "../../../code/api/core.ts";
import { applyStrategicMergePatch } from "../../../code/apiserver/patch/strategic-merge-patch.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import {
  GenerateContainersReadyCondition,
  GeneratePodReadyCondition,
} from "../../../code/kubelet/status/generate.ts";
import {
  type PodStatusClient,
  podConditionByKubelet,
  StatusManager,
} from "../../../code/kubelet/status/status-manager.ts";
import { isPodStatusByKubeletEqual } from "./status-equal.ts";

const cond = (type: string, status: "True" | "False", extra: Partial<PodCondition> = {}): PodCondition => ({
  type,
  status,
  ...extra,
});

describe("isPodStatusByKubeletEqual", () => {
  const base: PodStatus = {
    phase: "Running",
    podIP: "10.244.0.5",
    conditions: [
      cond("Initialized", "True", { lastTransitionTime: "2026-12-07T01:00:00Z" }),
      cond("Ready", "False", {
        reason: "ContainersNotReady",
        message: "containers with unready status: [a b]",
        lastTransitionTime: "2026-12-07T01:00:00Z",
      }),
    ],
    containerStatuses: [
      {
        name: "a",
        ready: false,
        restartCount: 0,
        image: "course/web",
        imageID: "sha256:1",
        containerID: "process://a1",
      },
    ],
  };
  const withConditions = (conditions: PodCondition[]): PodStatus => ({ ...base, conditions });

  it("the same status is equal; lastTransitionTime and lastProbeTime do not count", () => {
    expect(isPodStatusByKubeletEqual(base, structuredClone(base))).toBe(true);
    const later = withConditions(
      base.conditions!.map((c) => ({
        ...c,
        lastTransitionTime: "2026-12-07T02:00:00Z",
        lastProbeTime: "2026-12-07T02:00:00Z",
      })),
    );
    expect(isPodStatusByKubeletEqual(base, later)).toBe(true);
  });

  it("a kubelet condition's status, reason or message changing is a change", () => {
    const [init, ready] = base.conditions!;
    expect(isPodStatusByKubeletEqual(base, withConditions([init, { ...ready, status: "True" }]))).toBe(false);
    expect(
      isPodStatusByKubeletEqual(base, withConditions([init, { ...ready, reason: "PodCompleted" }])),
    ).toBe(false);
    expect(
      isPodStatusByKubeletEqual(
        base,
        withConditions([init, { ...ready, message: "containers with unready status: [b]" }]),
      ),
    ).toBe(false);
  });

  it("a kubelet condition appearing or disappearing is a change (DisruptionTarget, shared with the kubelet, too)", () => {
    const [init, ready] = base.conditions!;
    expect(isPodStatusByKubeletEqual(base, withConditions([init]))).toBe(false);
    expect(isPodStatusByKubeletEqual(withConditions([init]), base)).toBe(false);
    expect(
      isPodStatusByKubeletEqual(
        base,
        withConditions([init, ready, cond("DisruptionTarget", "True", { reason: "TerminationByKubelet" })]),
      ),
    ).toBe(false);
  });

  it("another writer's conditions do not count, nor does the order of the list", () => {
    const [init, ready] = base.conditions!;
    expect(
      isPodStatusByKubeletEqual(base, withConditions([cond("example.com/Audited", "True"), init, ready])),
    ).toBe(true);
    expect(
      isPodStatusByKubeletEqual(
        withConditions([cond("example.com/Audited", "False")]),
        withConditions([cond("example.com/Audited", "True")]),
      ),
    ).toBe(true);
    expect(isPodStatusByKubeletEqual(base, withConditions([ready, init]))).toBe(true);
  });

  it("every other field counts: phase, IPs, container statuses", () => {
    expect(isPodStatusByKubeletEqual(base, { ...base, phase: "Failed" })).toBe(false);
    expect(isPodStatusByKubeletEqual(base, { ...base, podIP: "10.244.0.6" })).toBe(false);
    const restarted = structuredClone(base);
    restarted.containerStatuses![0].restartCount = 1;
    expect(isPodStatusByKubeletEqual(base, restarted)).toBe(false);
  });
});

// ---- inside the real StatusManager --------------------------------------------------------------

const T0 = Date.parse("2026-12-07T01:00:00Z");
const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

/** A pod with containers a and b, bound a few seconds ago (the scheduler's PodScheduled, as the API server stores it). */
const boundPod = (readinessGates?: string[]): Pod => ({
  metadata: { name: "web", namespace: "default", uid: "uid-web" },
  spec: {
    nodeName: "n1",
    containers: [
      { name: "a", image: "course/web" },
      { name: "b", image: "course/web" },
    ],
    ...(readinessGates && { readinessGates: readinessGates.map((conditionType) => ({ conditionType })) }),
  },
  status: {
    phase: "Pending",
    conditions: [
      cond("PodScheduled", "True", { lastProbeTime: null, lastTransitionTime: "2026-12-07T00:59:55Z" }),
    ],
  },
});

interface ContainerView {
  ready: boolean;
  restartCount?: number;
}

/**
 * The kubelet around the manager: a fake API server holding the pod (patches applied as the real
 * one applies them, every request recorded), the pod manager's copy of it (the server's, as the
 * watch delivers it), and `syncPod` — the status SyncPod computes from what the containers do,
 * with the conditions in generateAPIPodStatus's order and other writers' conditions copied from
 * the server's copy.
 */
function kubelet(readinessGates?: string[]) {
  const clock = new FakeClock(T0);
  let server = boundPod(readinessGates);
  const requests: string[] = [];
  const errors: unknown[] = [];
  const client: PodStatusClient = {
    async get() {
      requests.push("GET");
      return structuredClone(server);
    },
    async patchStatus(_ns, _name, patch) {
      requests.push("PATCH");
      server = applyStrategicMergePatch(server, patch, "v1", "Pod") as Pod;
      return structuredClone(server);
    },
    async deleteFinal() {
      requests.push("DELETE");
    },
  };
  const manager = new StatusManager({
    client,
    podManager: {
      getPodByUID: (uid) => (uid === "uid-web" ? server : undefined),
      getMirrorPodByPod: () => undefined,
      mirrorUIDOf: () => undefined,
      translatePodUID: (uid) => uid,
    },
    shouldDelayTransitioningPodToTerminal: () => false,
    clock,
    onError: (err) => errors.push(err), // the fake server never fails: an error here is your function's
    isPodStatusByKubeletEqual, // yours
  });
  const containerStatus = (name: string, v: ContainerView): ContainerStatus => ({
    name,
    ready: v.ready,
    started: true,
    restartCount: v.restartCount ?? 0,
    image: "course/web",
    imageID: "sha256:0a1b",
    containerID: `process://${name}-${v.restartCount ?? 0}`,
    state: { running: { startedAt: new Date(T0 + (v.restartCount ?? 0) * 20_000).toISOString() } },
    ...(v.restartCount ? { lastState: { terminated: { exitCode: 1, reason: "Error" } } } : {}),
  });
  const syncPod = (a: ContainerView, b: ContainerView) => {
    const pod = server;
    const containerStatuses = [containerStatus("a", a), containerStatus("b", b)];
    const conditions = (pod.status?.conditions ?? []).filter((c) => !podConditionByKubelet(c.type));
    conditions.push(cond("PodReadyToStartContainers", "True"), cond("Initialized", "True"));
    conditions.push(GeneratePodReadyCondition(pod.spec, conditions, containerStatuses, "Running"));
    conditions.push(GenerateContainersReadyCondition(pod.spec, containerStatuses, "Running"));
    conditions.push(cond("PodScheduled", "True"));
    manager.setPodStatus(pod, {
      phase: "Running",
      conditions,
      hostIP: "192.168.0.10",
      podIP: "10.244.0.5",
      podIPs: [{ ip: "10.244.0.5" }],
      containerStatuses,
      qosClass: "BestEffort",
    });
  };
  /** Moves the fake clock `s` seconds, a second at a time, letting the manager's loop run. */
  const advance = async (s: number) => {
    await flush();
    for (let i = 0; i < s; i++) {
      if (errors.length > 0) throw errors[0];
      clock.step(1000);
      await flush();
    }
    if (errors.length > 0) throw errors[0];
  };
  /** Replaces the server's copy as another writer would (the pod manager sees it at once). */
  const otherWriter = (change: (status: PodStatus) => void) => {
    server = structuredClone(server);
    change(server.status!);
  };
  manager.start();
  return {
    manager,
    requests,
    syncPod,
    advance,
    otherWriter,
    server: () => server,
    condition: (type: string) => server.status?.conditions?.find((c) => c.type === type),
    stop: () => manager.stop(),
  };
}

const notReady = { ready: false };
const ready = { ready: true };

describe("inside the real StatusManager", () => {
  it("a pod synced every 5 s for a minute without change: one GET and one PATCH, nothing more", async () => {
    const k = kubelet();
    for (let t = 0; t < 60; t += 5) {
      k.syncPod(ready, ready);
      await k.advance(5);
    }
    expect(k.requests).toEqual(["GET", "PATCH"]);
    expect(k.condition("Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-12-07T01:00:00Z",
    });
    await k.stop();
  });

  it("another writer's condition on the server: not the kubelet's business — no request in the next minute", async () => {
    const k = kubelet();
    k.syncPod(ready, ready);
    await k.advance(2);
    expect(k.requests).toEqual(["GET", "PATCH"]);
    k.otherWriter((s) =>
      s.conditions!.push(cond("example.com/Audited", "True", { lastTransitionTime: "2026-12-07T01:00:02Z" })),
    );
    for (let t = 0; t < 60; t += 10) {
      await k.advance(5);
      k.syncPod(ready, ready); // copies the other writer's condition, as generateAPIPodStatus does
      await k.advance(5);
    }
    expect(k.requests).toEqual(["GET", "PATCH"]);
    expect(k.condition("example.com/Audited")?.status).toBe("True");
    await k.stop();
  });

  it("a readiness verdict, then the next sync: one write for the verdict, none for the sync", async () => {
    const k = kubelet();
    k.syncPod(notReady, ready);
    await k.advance(3);
    k.manager.setContainerReadiness("uid-web", "process://a-0", true); // the prober's verdict
    await k.advance(1);
    expect(k.condition("Ready")).toMatchObject({
      status: "True",
      lastTransitionTime: "2026-12-07T01:00:03Z",
    });
    expect(k.requests.filter((r) => r === "PATCH")).toHaveLength(2);
    k.syncPod(ready, ready); // the same news, the conditions in the generator's order
    await k.advance(30);
    expect(k.requests.filter((r) => r === "PATCH")).toHaveLength(2);
    await k.stop();
  });

  it("a readiness gate's condition appears: Ready stays False but its message changes — written, so describe shows the truth", async () => {
    const gate = "example.com/LoadBalancerReady";
    const k = kubelet([gate]);
    k.syncPod(ready, ready);
    await k.advance(2);
    expect(k.condition("Ready")).toMatchObject({
      status: "False",
      reason: "ReadinessGatesNotReady",
      message: `corresponding condition of pod readiness gate "${gate}" does not exist.`,
    });
    // The load balancer controller reports that it is still provisioning.
    k.otherWriter((s) =>
      s.conditions!.push(cond(gate, "False", { lastTransitionTime: "2026-12-07T01:00:02Z" })),
    );
    k.syncPod(ready, ready);
    await k.advance(2);
    expect(k.condition("Ready")).toMatchObject({
      status: "False",
      message: `the status of pod readiness gate "${gate}" is not "True", but False`,
    });
    expect(k.requests.filter((r) => r === "PATCH")).toHaveLength(2);
    await k.stop();
  });

  it("a container restarted while the conditions stayed the same: written", async () => {
    const k = kubelet();
    k.syncPod(notReady, notReady);
    await k.advance(20);
    k.syncPod({ ready: false, restartCount: 1 }, notReady);
    await k.advance(2);
    const a = k.server().status?.containerStatuses?.find((c) => c.name === "a");
    expect(a).toMatchObject({ restartCount: 1, containerID: "process://a-1" });
    expect(k.requests.filter((r) => r === "PATCH")).toHaveLength(2);
    await k.stop();
  });

  it("the server's copy drifted (the node lifecycle controller marked the pod not Ready): the 10 s batch puts it back", async () => {
    const k = kubelet();
    k.syncPod(ready, ready);
    await k.advance(3);
    k.otherWriter((s) => {
      const r = s.conditions!.find((c) => c.type === "Ready")!;
      Object.assign(r, { status: "False", lastTransitionTime: "2026-12-07T01:00:03Z" });
    });
    await k.advance(10);
    expect(k.condition("Ready")?.status).toBe("True");
    expect(k.requests).toEqual(["GET", "PATCH", "GET", "PATCH"]);
    await k.stop();
  });
});
