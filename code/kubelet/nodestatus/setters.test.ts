import { cpus, release, tmpdir, totalmem } from "node:os";
import { describe, expect, it } from "vitest";
import type { Node } from "../../api/core.ts";
import { nodeStatusPatch } from "./patch.ts";
import {
  allocatableFrom,
  images,
  type MachineInfo,
  machineInfo,
  machineInfoFromCapacity,
  machineInfoFromHost,
  memoryPressureCondition,
  metaTime,
  nodeAllocatableReservation,
  readyCondition,
} from "./setters.ts";

const t0 = Date.parse("2026-01-01T00:00:00Z");
const GiB = 1024 ** 3;
const machine: MachineInfo = {
  numCores: 4,
  memoryCapacity: 16 * GiB,
  rootfsCapacity: 100 * GiB,
  machineID: "m",
  systemUUID: "u",
  bootID: "boot-1",
  kernelVersion: "6.1.0",
  osImage: "Debian GNU/Linux 12 (bookworm)",
};
const newNode = (): Node => ({ apiVersion: "v1", kind: "Node", metadata: { name: "a" } });
const fullCapacity = { cpu: "4", memory: "16Gi", pods: "110", "ephemeral-storage": "100Gi" };

describe("ReadyCondition", () => {
  it("sets the transition time on the first heartbeat and keeps it while the status holds", () => {
    let now = t0;
    const events: string[] = [];
    const set = readyCondition({ now: () => now, recordEvent: (_, e) => events.push(e) });
    const node = newNode();
    node.status = { capacity: fullCapacity };
    set(node);
    expect(node.status.conditions).toEqual([
      {
        type: "Ready",
        status: "True",
        reason: "KubeletReady",
        message: "kubelet is posting ready status",
        lastHeartbeatTime: metaTime(t0),
        lastTransitionTime: metaTime(t0),
      },
    ]);
    now = t0 + 10_000;
    set(node);
    const ready = node.status.conditions?.[0];
    expect(ready?.lastHeartbeatTime).toBe(metaTime(t0 + 10_000));
    expect(ready?.lastTransitionTime).toBe(metaTime(t0));
    // Appearing for the first time is no transition event; only a flip is.
    expect(events).toEqual([]);
  });

  it("goes False/KubeletNotReady with the runtime's errors, and records NodeNotReady once", () => {
    let now = t0;
    let runtimeDown = false;
    const events: string[] = [];
    const set = readyCondition({
      now: () => now,
      runtimeErrors: () => (runtimeDown ? "container runtime is down" : undefined),
      networkErrors: () => (runtimeDown ? "container runtime network not ready" : undefined),
      recordEvent: (_, e) => events.push(e),
    });
    const node = newNode();
    node.status = { capacity: fullCapacity };
    set(node);
    now += 10_000;
    runtimeDown = true;
    set(node);
    expect(node.status.conditions?.[0]).toMatchObject({
      status: "False",
      reason: "KubeletNotReady",
      message: "[container runtime is down, container runtime network not ready]",
      lastTransitionTime: metaTime(now),
    });
    now += 10_000;
    set(node);
    expect(node.status.conditions?.[0].lastTransitionTime).toBe(metaTime(now - 10_000));
    expect(events).toEqual(["NodeNotReady"]);
  });

  it("is not ready while a required capacity is missing", () => {
    const node = newNode();
    node.status = { capacity: { cpu: "4", memory: "1Gi" } };
    readyCondition({ now: () => t0, recordEvent: () => {} })(node);
    expect(node.status.conditions?.[0]).toMatchObject({
      status: "False",
      message: "missing node capacity for resources: pods, ephemeral-storage",
    });
  });
});

describe("pressure conditions", () => {
  it("start Unknown, so the first heartbeat is a transition to False; pressure flips them to True", () => {
    let now = t0;
    let pressure = false;
    const events: string[] = [];
    const set = memoryPressureCondition(
      () => now,
      () => pressure,
      (_, e) => events.push(e),
    );
    const node = newNode();
    set(node);
    expect(node.status?.conditions?.[0]).toEqual({
      type: "MemoryPressure",
      status: "False",
      reason: "KubeletHasSufficientMemory",
      message: "kubelet has sufficient memory available",
      lastHeartbeatTime: metaTime(t0),
      lastTransitionTime: metaTime(t0),
    });
    now += 10_000;
    set(node);
    expect(node.status?.conditions?.[0].lastTransitionTime).toBe(metaTime(t0));
    now += 10_000;
    pressure = true;
    set(node);
    expect(node.status?.conditions?.[0]).toMatchObject({
      status: "True",
      reason: "KubeletHasInsufficientMemory",
      message: "kubelet has insufficient memory available",
      lastTransitionTime: metaTime(now),
    });
    expect(events).toEqual(["NodeHasSufficientMemory", "NodeHasInsufficientMemory"]);
  });
});

describe("capacity and allocatable", () => {
  it("subtracts kube-reserved, system-reserved and the hard eviction thresholds", () => {
    const node = newNode();
    machineInfo({
      nodeName: "a",
      maxPods: 110,
      machineInfo: () => machine,
      allocatableReservation: (cap) => nodeAllocatableReservation(cap, { cpu: "500m" }, { memory: "1Gi" }),
    })(node);
    expect(node.status?.capacity).toEqual(fullCapacity);
    expect(node.status?.allocatable).toEqual({
      cpu: "3500m",
      // 16Gi − 1Gi system-reserved − 100Mi memory.available
      memory: `${15 * 1024 - 100}Mi`,
      pods: "110",
      // nodefs.available<10% keeps back a tenth of the disk
      "ephemeral-storage": "90Gi",
    });
  });

  it("simulates a machine of a given size for a fake-runtime kubelet", () => {
    const node = newNode();
    machineInfo({
      nodeName: "sim-1",
      maxPods: 110,
      machineInfo: () =>
        machineInfoFromCapacity("sim-1", { cpu: "2", memory: "8Gi", "ephemeral-storage": "50Gi" }),
      allocatableReservation: (cap) => nodeAllocatableReservation(cap),
    })(node);
    expect(node.status?.capacity).toEqual({
      cpu: "2",
      memory: "8Gi",
      pods: "110",
      "ephemeral-storage": "50Gi",
    });
    expect(node.status?.allocatable).toEqual({
      cpu: "2",
      memory: `${8 * 1024 - 100}Mi`,
      pods: "110",
      "ephemeral-storage": "45Gi",
    });
    expect(node.status?.nodeInfo?.bootID).toBe("simulated-sim-1");
  });

  it("never goes below zero", () => {
    expect(allocatableFrom({ memory: "64Mi" }, { memory: "100Mi" })).toEqual({ memory: "0" });
  });

  it("records a reboot when the boot id changes", () => {
    const events: string[] = [];
    const node = newNode();
    const set = (bootID: string) =>
      machineInfo({
        nodeName: "a",
        maxPods: 110,
        machineInfo: () => ({ ...machine, bootID }),
        allocatableReservation: () => ({}),
        recordEvent: (type, reason, message) => events.push(`${type} ${reason} ${message}`),
      })(node);
    set("boot-1");
    set("boot-1");
    set("boot-2");
    expect(events).toEqual(["Warning Rebooted Node a has been rebooted, boot id: boot-2"]);
  });
});

describe("images", () => {
  it("lists the largest images first, at most maxImages, five names each", async () => {
    const node = newNode();
    await images(2, async () => [
      { id: "1", repoTags: ["small:1"], size: 10 },
      { id: "2", repoTags: ["big:1", "big:2", "big:3", "big:4", "big:5", "big:6"], size: 300 },
      { id: "3", repoTags: ["mid:1"], size: 200 },
    ])(node);
    expect(node.status?.images).toEqual([
      { names: ["big:1", "big:2", "big:3", "big:4", "big:5"], sizeBytes: 300 },
      { names: ["mid:1"], sizeBytes: 200 },
    ]);
  });
});

describe("nodeStatusPatch", () => {
  it("sends only what changed: heartbeat times, and addresses replaced whole", () => {
    const before: Node = {
      metadata: { name: "a", labels: { x: "1", gone: "y" } },
      status: {
        capacity: { cpu: "4" },
        addresses: [{ type: "InternalIP", address: "127.0.0.1" }],
        conditions: [
          { type: "Ready", status: "True", reason: "KubeletReady", lastHeartbeatTime: "t1" },
          { type: "Old", status: "True" },
        ],
      },
    };
    const after: Node = structuredClone(before);
    after.metadata.labels = { x: "1" };
    after.status = {
      capacity: { cpu: "4" },
      addresses: [{ type: "InternalIP", address: "127.0.0.2" }],
      conditions: [{ type: "Ready", status: "True", reason: "KubeletReady", lastHeartbeatTime: "t2" }],
    };
    expect(nodeStatusPatch(before, after)).toEqual({
      metadata: { labels: { gone: null } },
      status: {
        "$setElementOrder/conditions": [{ type: "Ready" }],
        conditions: [
          { type: "Ready", lastHeartbeatTime: "t2" },
          { type: "Old", $patch: "delete" },
        ],
        addresses: [{ $patch: "replace" }, { type: "InternalIP", address: "127.0.0.2" }],
      },
    });
    expect(nodeStatusPatch(before, structuredClone(before))).toEqual({});
  });
});

describe("machineInfoFromHost", () => {
  it("reads this machine: cores, memory, the root dir's filesystem, kernel", async () => {
    const info = await machineInfoFromHost(tmpdir());
    expect(info.numCores).toBe(cpus().length);
    expect(info.memoryCapacity).toBe(totalmem());
    expect(info.rootfsCapacity).toBeGreaterThan(0);
    expect(info.kernelVersion).toBe(release());
  });
});
