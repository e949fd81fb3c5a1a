/**
 * The node Lease controller against a real in-process API server, on a FakeClock: created with
 * the Node as owner, renewed every quarter of its duration, recreated when deleted.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Lease } from "../../api/coordination.ts";
import type { Node } from "../../api/core.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { isNotFound } from "../../client/errors.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { formatMicroTime } from "../../leaderelection/resourcelock/lease-lock.ts";
import { type NodeLeaseController, startNodeLeaseController } from "./controller.ts";

const t0 = Date.parse("2026-01-01T00:00:00Z");

let server: APIServer;
let client: Clientset;
let clock: FakeClock;
let controller: NodeLeaseController | undefined;
let n = 0;

beforeAll(async () => {
  server = await startAPIServer({ insecurePort: 0 });
  client = newForConfig({ host: server.url, qps: 1000, burst: 1000 });
});
afterAll(async () => {
  await server?.close();
});
afterEach(async () => {
  await controller?.stop();
  controller = undefined;
});

async function parked(): Promise<void> {
  await vi.waitFor(() => expect(clock.hasWaiters()).toBe(true), { timeout: 20_000, interval: 2 });
}
async function advance(ms: number): Promise<void> {
  clock.step(ms);
  await parked();
}

async function newNode(): Promise<Node> {
  n++;
  return client.coreV1
    .nodes()
    .create({ apiVersion: "v1", kind: "Node", metadata: { name: `lease-node-${n}` } });
}
const leaseOf = (name: string) => client.coordinationV1.leases("kube-node-lease").get(name);
async function leaseOrUndefined(name: string): Promise<Lease | undefined> {
  try {
    return await leaseOf(name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

describe("startNodeLeaseController", () => {
  it("creates kube-node-lease/<node> owned by the Node and renews it every 10 s (40 s × 0.25)", async () => {
    clock = new FakeClock(t0);
    const node = await newNode();
    const name = node.metadata.name as string;
    controller = startNodeLeaseController({ client, clock, nodeName: name, random: () => 0 });
    await parked();
    const created = await leaseOf(name);
    expect(created.spec).toEqual({
      holderIdentity: name,
      leaseDurationSeconds: 40,
      renewTime: formatMicroTime(t0),
    });
    expect(created.metadata.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "Node", name, uid: node.metadata.uid },
    ]);

    const renewTimes: string[] = [];
    for (let i = 1; i <= 6; i++) {
      await advance(9_999);
      // Not yet: the renewal is due at the full period.
      expect((await leaseOf(name)).spec?.renewTime).toBe(renewTimes.at(-1) ?? formatMicroTime(t0));
      await advance(1);
      renewTimes.push((await leaseOf(name)).spec?.renewTime as string);
    }
    expect(renewTimes).toEqual([1, 2, 3, 4, 5, 6].map((i) => formatMicroTime(t0 + i * 10_000)));
  });

  it("renews at a quarter of a shortened --node-lease-duration-seconds", async () => {
    clock = new FakeClock(t0);
    const name = (await newNode()).metadata.name as string;
    controller = startNodeLeaseController({
      client,
      clock,
      nodeName: name,
      leaseDurationSeconds: 4,
      random: () => 0,
    });
    await parked();
    expect(clock.nextDue()).toBe(t0 + 1000);
    await advance(1000);
    expect((await leaseOf(name)).spec).toMatchObject({
      leaseDurationSeconds: 4,
      renewTime: formatMicroTime(t0 + 1000),
    });
  });

  it("does not create the Lease before its Node exists, and creates it once the Node is there", async () => {
    clock = new FakeClock(t0);
    n++;
    const name = `lease-node-${n}`;
    controller = startNodeLeaseController({ client, clock, nodeName: name, random: () => 0 });
    await parked();
    expect(await leaseOrUndefined(name)).toBeUndefined();
    const node = await client.coreV1.nodes().create({ apiVersion: "v1", kind: "Node", metadata: { name } });
    await advance(10_000);
    const lease = await leaseOf(name);
    expect(lease.metadata.ownerReferences?.[0].uid).toBe(node.metadata.uid);
    expect(lease.spec?.renewTime).toBe(formatMicroTime(t0 + 10_000));
  });

  it("while the API server cannot be reached, retries ensuring the Lease after 200 ms, doubling to 7 s", async () => {
    clock = new FakeClock(t0);
    const lines: string[] = [];
    controller = startNodeLeaseController({
      client: newForConfig({ host: "http://127.0.0.1:1" }), // nothing listens there
      clock,
      nodeName: "unreachable",
      log: (l) => lines.push(l),
    });
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      await parked();
      const due = clock.nextDue() as number;
      waits.push(due - clock.now());
      clock.setTime(due);
    }
    expect(waits).toEqual([200, 400, 800, 1600, 3200, 6400, 7000, 7000]);
    expect(lines[0]).toMatch(/^"Failed to ensure lease exists, will retry" err=".*" interval="200ms"$/);
  });

  it("recreates a deleted Lease at the next renewal", async () => {
    clock = new FakeClock(t0);
    const name = (await newNode()).metadata.name as string;
    controller = startNodeLeaseController({ client, clock, nodeName: name, random: () => 0 });
    await parked();
    const first = await leaseOf(name);
    await client.coordinationV1.leases("kube-node-lease").delete(name);
    await advance(10_000);
    const again = await leaseOf(name);
    expect(again.metadata.uid).not.toBe(first.metadata.uid);
    expect(again.spec?.renewTime).toBe(formatMicroTime(t0 + 10_000));
  });

  it("after a conflict renews from the server's copy, keeping what another writer set", async () => {
    clock = new FakeClock(t0);
    const name = (await newNode()).metadata.name as string;
    controller = startNodeLeaseController({ client, clock, nodeName: name, random: () => 0 });
    await parked();
    const lease = await leaseOf(name);
    // Another writer: the controller's kept copy is now stale (its resourceVersion conflicts).
    await client.coordinationV1
      .leases("kube-node-lease")
      .update({ ...lease, metadata: { ...lease.metadata, labels: { touched: "yes" } } });
    await advance(10_000);
    const renewed = await leaseOf(name);
    expect(renewed.spec?.renewTime).toBe(formatMicroTime(t0 + 10_000));
    expect(renewed.metadata.labels).toEqual({ touched: "yes" });
  });
});
