/**
 * The node status loop against a real in-process API server, on a FakeClock: registration, the
 * status written only on change or after the report period, and conditions' transition times
 * kept across heartbeats.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Node } from "../api/core.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { FakeClock } from "../client/util/clock.ts";
import {
  type KubeletNodeConfig,
  kubeletVersion,
  type NodeStatusUpdater,
  nodeStatusOptionsWithDefaults,
  registerWithAPIServer,
  startNodeStatusUpdater,
} from "./kubelet-node-status.ts";
import { goarch, goos, type MachineInfo, metaTime } from "./nodestatus/setters.ts";

const t0 = Date.parse("2026-01-01T00:00:00Z");
const GiB = 1024 ** 3;
const machine: MachineInfo = {
  numCores: 8,
  memoryCapacity: 32 * GiB,
  rootfsCapacity: 200 * GiB,
  machineID: "machine-a",
  systemUUID: "uuid-a",
  bootID: "boot-a",
  kernelVersion: "6.1.0-test",
  osImage: "Test OS",
};

let server: APIServer;
let client: Clientset;
let clock: FakeClock;
let updater: NodeStatusUpdater | undefined;
let n = 0;

beforeAll(async () => {
  server = await startAPIServer({ insecurePort: 0 });
  client = newForConfig({ host: server.url, qps: 1000, burst: 1000 });
});
afterAll(async () => {
  await server?.close();
});
afterEach(async () => {
  await updater?.stop();
  updater = undefined;
});

/** Waits until the loop has parked on the clock (its HTTP calls done), then returns. */
async function parked(): Promise<void> {
  await vi.waitFor(() => expect(clock.hasWaiters()).toBe(true), { timeout: 20_000, interval: 2 });
}

/** Moves the fake clock by `ms` and waits for the loop to park again. */
async function advance(ms: number): Promise<void> {
  clock.step(ms);
  await parked();
}

function kubelet(extra: Partial<KubeletNodeConfig> = {}): KubeletNodeConfig {
  n++;
  return {
    client,
    clock,
    nodeName: `node-${n}`,
    hostname: `node-${n}`,
    kubeletPort: 10250 + n,
    machine,
    runtimeType: "fake",
    runtimeVersion: () => "0.1.0",
    ...extra,
  };
}

const getNode = (name: string) => client.coreV1.nodes().get(name);

describe("registerWithAPIServer", () => {
  it("registers the initial Node: labels, taints, pod CIDR, capacity, addresses and a Ready condition", async () => {
    clock = new FakeClock(t0);
    const k = kubelet({
      nodeLabels: { "node.kubernetes.io/pool": "blue", "kubernetes.io/hostname": "custom" },
      registerWithTaints: [{ key: "dedicated", value: "ci", effect: "NoSchedule" }],
      podCIDR: "10.244.7.0/24",
    });
    const registered = registerWithAPIServer(k);
    await parked();
    clock.step(100); // upstream's first wait
    expect(await registered).toBe(true);
    const node = await getNode(k.nodeName);
    expect(node.metadata.labels).toEqual({
      "kubernetes.io/hostname": "custom", // --node-labels wins over the default
      "kubernetes.io/os": goos(),
      "kubernetes.io/arch": goarch(),
      "beta.kubernetes.io/os": goos(),
      "beta.kubernetes.io/arch": goarch(),
      "node.kubernetes.io/pool": "blue",
    });
    expect(node.spec).toMatchObject({
      taints: [{ key: "dedicated", value: "ci", effect: "NoSchedule" }],
      podCIDR: "10.244.7.0/24",
      podCIDRs: ["10.244.7.0/24"],
    });
    expect(node.status?.capacity).toEqual({
      cpu: "8",
      memory: "32Gi",
      pods: "110",
      "ephemeral-storage": "200Gi",
    });
    expect(node.status?.allocatable).toEqual({
      cpu: "8",
      memory: `${32 * 1024 - 100}Mi`,
      pods: "110",
      "ephemeral-storage": "180Gi",
    });
    expect(node.status?.addresses).toEqual([
      { type: "InternalIP", address: "127.0.0.1" },
      { type: "Hostname", address: k.hostname },
    ]);
    expect(node.status?.daemonEndpoints).toEqual({ kubeletEndpoint: { Port: k.kubeletPort } });
    expect(node.status?.nodeInfo).toMatchObject({
      kubeletVersion,
      containerRuntimeVersion: "fake://0.1.0",
      bootID: "boot-a",
      operatingSystem: goos(),
    });
    expect(node.status?.conditions?.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual([
      "MemoryPressure=False/KubeletHasSufficientMemory",
      "DiskPressure=False/KubeletHasNoDiskPressure",
      "PIDPressure=False/KubeletHasSufficientPID",
      "Ready=True/KubeletReady",
    ]);
  });

  it("retries with doubling waits while the API server refuses, printing each attempt", async () => {
    clock = new FakeClock(t0);
    const lines: string[] = [];
    // A port nothing listens on: every create fails to connect.
    const k = kubelet({ client: newForConfig({ host: "http://127.0.0.1:1" }), log: (l) => lines.push(l) });
    const abort = new AbortController();
    const registered = registerWithAPIServer(k, abort.signal);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      await parked();
      const due = clock.nextDue() as number;
      waits.push(due - clock.now());
      clock.setTime(due);
      await vi.waitFor(
        () => expect(lines.filter((l) => l.includes("Unable to register")).length).toBe(i + 1),
        {
          timeout: 20_000,
        },
      );
    }
    abort.abort();
    expect(await registered).toBe(false);
    expect(waits).toEqual([100, 200, 400, 800, 1600, 3200, 6400, 7000]);
    expect(lines[0]).toBe(`"Attempting to register node" node="${k.nodeName}"`);
  });

  it("on restart keeps the existing Node and reconciles only the kubelet's default labels", async () => {
    clock = new FakeClock(t0);
    const k = kubelet();
    await client.coreV1.nodes().create({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: k.nodeName, labels: { "kubernetes.io/hostname": "stale", team: "x" } },
      spec: { unschedulable: true },
    } as Node);
    const lines: string[] = [];
    const registered = registerWithAPIServer({ ...k, log: (l) => lines.push(l) });
    await parked();
    clock.step(100);
    expect(await registered).toBe(true);
    const node = await getNode(k.nodeName);
    expect(node.metadata.labels).toMatchObject({ "kubernetes.io/hostname": k.hostname, team: "x" });
    expect(node.spec?.unschedulable).toBe(true); // the cordon stays
    // A Node made without capacity gets the kubelet's (updateDefaultResources).
    expect(node.status?.capacity).toEqual({
      cpu: "8",
      memory: "32Gi",
      pods: "110",
      "ephemeral-storage": "200Gi",
    });
    expect(node.status?.allocatable?.memory).toBe(`${32 * 1024 - 100}Mi`);
    expect(lines).toContain(`"Node was previously registered" node="${k.nodeName}"`);
  });
});

describe("startNodeStatusUpdater", () => {
  it("writes an unchanged status only once per nodeStatusReportFrequency, a change at once", async () => {
    clock = new FakeClock(t0);
    let memoryPressure = false;
    const k = kubelet({
      underMemoryPressure: () => memoryPressure,
      random: () => 0,
    } as Partial<KubeletNodeConfig>);
    updater = startNodeStatusUpdater({ ...k, random: () => 0 });
    await parked(); // registration's first wait
    await advance(100); // registered, first status update written, now waiting 10 s
    const registered = await getNode(k.nodeName);
    const ready0 = registered.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready0?.lastTransitionTime).toBe(metaTime(t0 + 100));

    // 29 more periods of 10 s: nothing changed, under 5 minutes since the last write — no PATCH.
    const rv = registered.metadata.resourceVersion;
    for (let i = 1; i <= 29; i++) {
      await advance(10_000);
      expect((await getNode(k.nodeName)).metadata.resourceVersion).toBe(rv);
    }
    // The 30th period is 5 minutes after the last write: written although unchanged.
    await advance(10_000);
    const reported = await getNode(k.nodeName);
    expect(reported.metadata.resourceVersion).not.toBe(rv);
    const ready1 = reported.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready1?.lastHeartbeatTime).toBe(metaTime(t0 + 100 + 300_000));
    expect(ready1?.lastTransitionTime).toBe(ready0?.lastTransitionTime);

    // A change is written at the next period, whatever the report frequency says.
    memoryPressure = true;
    await advance(10_000);
    const changed = await getNode(k.nodeName);
    expect(changed.metadata.resourceVersion).not.toBe(reported.metadata.resourceVersion);
    const mem = changed.status?.conditions?.find((c) => c.type === "MemoryPressure");
    expect(mem).toMatchObject({
      status: "True",
      reason: "KubeletHasInsufficientMemory",
      lastTransitionTime: metaTime(t0 + 100 + 310_000),
    });
    // Ready did not flip, so its transition time is still the registration's.
    expect(changed.status?.conditions?.find((c) => c.type === "Ready")?.lastTransitionTime).toBe(
      ready0?.lastTransitionTime,
    );
    expect(updater.state.patches).toBe(3);
  }, 90_000);

  it("with shortened frequencies, reports at the shorter period (demo flags)", async () => {
    clock = new FakeClock(t0);
    const k = kubelet({ options: { nodeStatusUpdateFrequencyMs: 1000, nodeStatusReportFrequencyMs: 3000 } });
    updater = startNodeStatusUpdater({ ...k, random: () => 0 });
    await parked();
    await advance(100);
    const rvs: string[] = [];
    for (let i = 0; i < 6; i++) {
      await advance(1000);
      rvs.push((await getNode(k.nodeName)).metadata.resourceVersion as string);
    }
    // Written at +3 s and +6 s only.
    expect(new Set(rvs.slice(0, 2)).size).toBe(1);
    expect(rvs[2]).not.toBe(rvs[1]);
    expect(rvs[3]).toBe(rvs[2]);
    expect(rvs[4]).toBe(rvs[2]);
    expect(rvs[5]).not.toBe(rvs[4]);
  });

  it("gives up a period after nodeStatusUpdateRetry (5) tries, and does not register a deleted Node again", async () => {
    clock = new FakeClock(t0);
    const lines: string[] = [];
    let repeated = 0;
    const k = kubelet({ log: (l) => lines.push(l), onRepeatedHeartbeatFailure: () => repeated++ });
    updater = startNodeStatusUpdater({ ...k, random: () => 0 });
    await parked();
    await advance(100);
    await client.coreV1.nodes().delete(k.nodeName);
    await advance(10_000);
    expect(lines.filter((l) => l.startsWith('"Error updating node status, will retry"'))).toHaveLength(5);
    expect(lines.at(-1)).toBe('"Unable to update node status" err="update node status exceeds retry count"');
    expect(repeated).toBe(4);
    // Upstream registers once per kubelet start: the Node stays gone until the kubelet restarts.
    await expect(getNode(k.nodeName)).rejects.toThrow(/not found/);
  });

  it("reports a runtime that goes down at the next period: Ready False, NodeNotReady, and back", async () => {
    clock = new FakeClock(t0);
    let runtimeDown = false;
    const events: string[] = [];
    const k = kubelet({
      runtimeErrors: () => (runtimeDown ? "container runtime is down" : undefined),
      recordEvent: (type, reason, message) => events.push(`${type} ${reason}: ${message}`),
    });
    updater = startNodeStatusUpdater({ ...k, random: () => 0 });
    await parked();
    await advance(100);
    runtimeDown = true;
    await advance(10_000);
    const down = (await getNode(k.nodeName)).status?.conditions?.find((c) => c.type === "Ready");
    expect(down).toMatchObject({
      status: "False",
      reason: "KubeletNotReady",
      message: "container runtime is down",
      lastTransitionTime: metaTime(t0 + 10_100),
    });
    runtimeDown = false;
    await advance(10_000);
    const up = (await getNode(k.nodeName)).status?.conditions?.find((c) => c.type === "Ready");
    expect(up).toMatchObject({ status: "True", lastTransitionTime: metaTime(t0 + 20_100) });
    // The pressure conditions' first appearance, then the two flips of Ready.
    expect(events.filter((e) => e.includes("Ready"))).toEqual([
      `Normal NodeNotReady: Node ${k.nodeName} status is now: NodeNotReady`,
      `Normal NodeReady: Node ${k.nodeName} status is now: NodeReady`,
    ]);
  });

  it("runs the setters it is given (setNodeStatusFuncs); one that fails is logged, the next still run", async () => {
    clock = new FakeClock(t0);
    const lines: string[] = [];
    const k = kubelet({ log: (l) => lines.push(l) });
    k.setNodeStatusFuncs = [
      () => {
        throw new Error("no machine info");
      },
      (node) => {
        node.status = { ...node.status, capacity: { cpu: "1" } };
      },
    ];
    const registered = registerWithAPIServer(k);
    await parked();
    clock.step(100);
    expect(await registered).toBe(true);
    expect((await getNode(k.nodeName)).status?.capacity).toEqual({ cpu: "1" });
    expect(lines).toContain(
      `"Failed to set some node status fields" err="no machine info" node="${k.nodeName}"`,
    );
  });

  it("defaults the report frequency to an explicitly set update frequency, as upstream's defaulting does", () => {
    expect(nodeStatusOptionsWithDefaults({})).toMatchObject({
      nodeStatusUpdateFrequencyMs: 10_000,
      nodeStatusReportFrequencyMs: 300_000,
    });
    expect(nodeStatusOptionsWithDefaults({ nodeStatusUpdateFrequencyMs: 2000 })).toMatchObject({
      nodeStatusUpdateFrequencyMs: 2000,
      nodeStatusReportFrequencyMs: 2000,
    });
    expect(
      nodeStatusOptionsWithDefaults({
        nodeStatusUpdateFrequencyMs: 2000,
        nodeStatusReportFrequencyMs: 60_000,
      }),
    ).toMatchObject({ nodeStatusReportFrequencyMs: 60_000 });
  });

  it("puts back a removed kubernetes.io/os label at the next period", async () => {
    clock = new FakeClock(t0);
    const k = kubelet();
    updater = startNodeStatusUpdater({ ...k, random: () => 0 });
    await parked();
    await advance(100);
    await client.coreV1.nodes().patch(k.nodeName, "application/merge-patch+json", {
      metadata: { labels: { "kubernetes.io/os": null } },
    });
    await advance(10_000);
    expect((await getNode(k.nodeName)).metadata.labels?.["kubernetes.io/os"]).toBe(goos());
  });
});
