import { describe, expect, it } from "vitest";
import type { Pod, PodCondition, PodStatus } from "../../api/core.ts";
import { applyStrategicMergePatch } from "../../apiserver/patch/strategic-merge-patch.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { podStatusPatch } from "./patch-pod-status.ts";
import {
  isPodStatusByKubeletEqual,
  mergePodStatus,
  type PodStatusClient,
  StatusManager,
} from "./status-manager.ts";

const cond = (type: string, status: "True" | "False", extra: Partial<PodCondition> = {}): PodCondition => ({
  type,
  status,
  ...extra,
});

describe("isPodStatusByKubeletEqual", () => {
  const base: PodStatus = {
    phase: "Running",
    conditions: [cond("Ready", "True", { lastTransitionTime: "2026-01-01T00:00:00Z" })],
    podIP: "10.0.0.1",
  };
  it("ignores transition times and conditions the kubelet does not own", () => {
    const later = {
      ...base,
      conditions: [
        cond("Ready", "True", { lastTransitionTime: "2026-01-01T00:05:00Z" }),
        cond("example.com/gate", "False"),
      ],
    };
    expect(isPodStatusByKubeletEqual(base, later)).toBe(true);
  });
  it("sees a change of a kubelet condition's status, reason or message, or of any other field", () => {
    expect(isPodStatusByKubeletEqual(base, { ...base, conditions: [cond("Ready", "False")] })).toBe(false);
    expect(
      isPodStatusByKubeletEqual(base, { ...base, conditions: [cond("Ready", "True", { reason: "X" })] }),
    ).toBe(false);
    expect(
      isPodStatusByKubeletEqual(base, {
        ...base,
        conditions: [...base.conditions!, cond("Initialized", "True")],
      }),
    ).toBe(false);
    expect(isPodStatusByKubeletEqual(base, { ...base, podIP: "10.0.0.2" })).toBe(false);
  });
});

describe("podStatusPatch", () => {
  it("sends only what changed; applied by the server it keeps other writers' conditions", () => {
    const server: PodStatus = {
      phase: "Pending",
      conditions: [cond("PodScheduled", "True"), cond("example.com/gate", "True")],
    };
    const kubelet: PodStatus = {
      phase: "Running",
      conditions: [cond("PodScheduled", "True"), cond("example.com/gate", "True"), cond("Ready", "True")],
    };
    const patch = podStatusPatch(server, kubelet);
    expect(patch).toEqual({
      phase: "Running",
      "$setElementOrder/conditions": [
        { type: "PodScheduled" },
        { type: "example.com/gate" },
        { type: "Ready" },
      ],
      conditions: [cond("Ready", "True")],
    });
    // Meanwhile someone else added a condition: the patch keeps it.
    const current = { ...server, conditions: [...server.conditions!, cond("other", "True")] };
    const applied = applyStrategicMergePatch(
      { metadata: {}, status: current },
      { status: patch },
      "v1",
      "Pod",
    ) as Pod;
    expect(applied.status?.conditions?.map((c) => c.type).sort()).toEqual([
      "PodScheduled",
      "Ready",
      "example.com/gate",
      "other",
    ]);
    expect(podStatusPatch(kubelet, kubelet)).toEqual({});
    // A condition that turned True loses its reason and message: nulls, merged field by field.
    const notReady = {
      phase: "Running" as const,
      conditions: [cond("Ready", "False", { reason: "ContainersNotReady", message: "m" })],
    };
    const nowReady = { phase: "Running" as const, conditions: [cond("Ready", "True")] };
    const p2 = podStatusPatch(notReady, nowReady);
    expect(p2.conditions).toEqual([{ type: "Ready", status: "True", reason: null, message: null }]);
    const after = applyStrategicMergePatch(
      { metadata: {}, status: notReady },
      { status: p2 },
      "v1",
      "Pod",
    ) as Pod;
    expect(after.status?.conditions).toEqual([cond("Ready", "True")]);
  });
});

describe("mergePodStatus", () => {
  it("holds back a terminal phase while containers could run, and never reports a terminal pod Ready", () => {
    const old: PodStatus = {
      phase: "Running",
      conditions: [cond("Ready", "True"), cond("DisruptionTarget", "True")],
    };
    const next: PodStatus = { phase: "Failed", conditions: [cond("Ready", "True")] };
    expect(mergePodStatus(old, next, true).phase).toBe("Running");
    const merged = mergePodStatus(old, next, false);
    expect(merged.phase).toBe("Failed");
    expect(merged.conditions?.find((c) => c.type === "Ready")).toMatchObject({
      status: "False",
      reason: "PodFailed",
    });
  });
});

/** A client over one in-memory pod, applying patches as the API server would. */
function fakeClient(pod: Pod) {
  const requests: string[] = [];
  let current = structuredClone(pod);
  const client: PodStatusClient = {
    async get() {
      requests.push("GET");
      if (!current) throw Object.assign(new Error("not found"), { reason: "NotFound" });
      return structuredClone(current);
    },
    async patchStatus(_ns, _name, patch) {
      requests.push(`PATCH ${JSON.stringify(patch)}`);
      current = applyStrategicMergePatch(current, patch, "v1", "Pod") as Pod;
      return structuredClone(current);
    },
    async deleteFinal(_ns, _name, uid) {
      requests.push(`DELETE uid=${uid}`);
    },
  };
  return {
    client,
    requests,
    get pod() {
      return current;
    },
    set pod(p: Pod) {
      current = p;
    },
  };
}

describe("StatusManager", () => {
  const pod: Pod = {
    metadata: { name: "p", namespace: "default", uid: "u1" },
    spec: { containers: [{ name: "c", image: "img" }] },
    status: {
      phase: "Pending",
      conditions: [cond("PodScheduled", "True", { lastTransitionTime: "2026-01-01T00:00:00Z" })],
    },
  };
  const setup = () => {
    const clock = new FakeClock(Date.parse("2026-02-01T00:00:00Z"));
    const api = fakeClient(pod);
    let delay = true;
    const m = new StatusManager({
      client: api.client,
      podManager: {
        getPodByUID: () => api.pod,
        getMirrorPodByPod: () => undefined,
        mirrorUIDOf: () => undefined,
        translatePodUID: (u) => u,
      },
      shouldDelayTransitioningPodToTerminal: () => delay,
      clock,
    });
    return { clock, api, m, setDelay: (d: boolean) => (delay = d) };
  };
  const running = (ready: "True" | "False"): PodStatus => ({
    phase: "Running",
    conditions: [cond("PodScheduled", "True"), cond("Ready", ready), cond("ContainersReady", ready)],
    containerStatuses: [
      {
        name: "c",
        ready: ready === "True",
        restartCount: 0,
        image: "img",
        imageID: "i",
        containerID: "fake://1",
        state: { running: { startedAt: "2026-02-01T00:00:00.123Z" } },
      },
    ],
  });

  it("writes a status once, and again only when the kubelet's part changes; transition times kept", async () => {
    const { clock, api, m } = setup();
    m.setPodStatus(pod, running("False"));
    expect(await m.syncBatch(false)).toBe(1);
    expect(api.requests.filter((r) => r.startsWith("PATCH")).length).toBe(1);
    const firstReady = api.pod.status?.conditions?.find((c) => c.type === "Ready");
    expect(firstReady?.lastTransitionTime).toBe("2026-02-01T00:00:00Z");
    // PodScheduled did not change: its time from the server stays.
    expect(api.pod.status?.conditions?.find((c) => c.type === "PodScheduled")?.lastTransitionTime).toBe(
      "2026-01-01T00:00:00Z",
    );

    clock.step(5_000);
    m.setPodStatus(pod, running("False")); // the same again: no new version, nothing sent
    expect(await m.syncBatch(false)).toBe(0);
    expect(await m.syncBatch(true)).toBe(0); // and the server agrees: no reconcile
    expect(api.requests.filter((r) => r.startsWith("PATCH")).length).toBe(1);

    clock.step(5_000);
    m.setContainerReadiness("u1", "fake://1", true);
    expect(await m.syncBatch(false)).toBe(1);
    expect(api.requests.filter((r) => r.startsWith("PATCH")).length).toBe(2);
    const ready = api.pod.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "True", lastTransitionTime: "2026-02-01T00:00:10Z" });
    expect(api.pod.status?.containerStatuses?.[0].ready).toBe(true);
  });

  it("reconciles when the server's copy drifted from the kubelet's", async () => {
    const { api, m } = setup();
    m.setPodStatus(pod, running("True"));
    await m.syncBatch(false);
    api.pod = { ...api.pod, status: { ...api.pod.status, phase: "Unknown" } }; // someone overwrote it
    expect(await m.syncBatch(false)).toBe(0); // nothing new from the kubelet
    expect(await m.syncBatch(true)).toBe(1); // the periodic batch notices
    expect(api.pod.status?.phase).toBe("Running");
  });

  it("sends the final DELETE (grace 0, UID precondition) only once the deleted pod is finished and terminal", async () => {
    const { api, m, setDelay } = setup();
    const deleted: Pod = {
      ...pod,
      metadata: {
        ...pod.metadata,
        deletionTimestamp: "2026-02-01T00:00:00Z",
        deletionGracePeriodSeconds: 30,
      },
    };
    api.pod = { ...structuredClone(deleted), status: api.pod.status };
    m.setPodStatus(deleted, running("True"));
    await m.syncBatch(false);
    expect(api.requests.some((r) => r.startsWith("DELETE"))).toBe(false);

    // Containers stopped; the worker is not done yet: Failed is held back, no delete.
    m.setPodStatus(deleted, { ...running("False"), phase: "Failed" });
    await m.syncBatch(false);
    expect(api.pod.status?.phase).toBe("Running");
    expect(api.requests.some((r) => r.startsWith("DELETE"))).toBe(false);

    setDelay(false);
    m.terminatePod(deleted);
    await m.syncBatch(false);
    expect(api.pod.status?.phase).toBe("Failed");
    expect(api.pod.status?.containerStatuses?.[0].state?.terminated).toMatchObject({
      exitCode: 137,
      reason: "ContainerStatusUnknown",
    });
    expect(api.requests.filter((r) => r.startsWith("DELETE"))).toEqual(["DELETE uid=u1"]);
    expect(m.getPodStatus("u1")).toBeUndefined(); // forgotten after the delete
  });

  it("runs its batches on a timer and stops without leaving one", async () => {
    const { clock, api, m } = setup();
    m.start();
    m.setPodStatus(pod, running("True"));
    for (let i = 0; i < 20 && !api.requests.some((r) => r.startsWith("PATCH")); i++)
      await new Promise((r) => setImmediate(r));
    expect(api.requests.some((r) => r.startsWith("PATCH"))).toBe(true);
    expect(clock.nextDue()).toBe(clock.now() + 10_000);
    await m.stop();
    expect(clock.hasWaiters()).toBe(false);
  });
});
