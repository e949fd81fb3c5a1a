// Exercise 7.6: your nodeHealthVerdict, first alone, then inside the course's real node lifecycle
// controller over a real API server and real informers, on a fake clock: kubelets played by the
// test post status and renew Leases (with clocks of their own), the controller's passes run at
// chosen instants, and the Node's Ready condition shows the verdict.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Lease } from "../../../code/api/coordination.ts";
import type { Node, NodeCondition } from "../../../code/api/core.ts";
import type { KubeObject } from "../../../code/api/meta.ts";
import type { GroupVersionResource } from "../../../code/api/schema.ts";
import { type APIServer, startAPIServer } from "../../../code/apiserver/server.ts";
import { newSharedInformerFactory, Resources } from "../../../code/client/informers/factory.ts";
import { type Clientset, newForConfig } from "../../../code/client/kubernetes/clientset.ts";
import type { SharedInformerFactory } from "../../../code/client/tools/cache/informer-factory.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import { defaultControllerManagerConfig } from "../../../code/controllers/controller-context.ts";
import {
  type NodeLifecycleController,
  newNodeLifecycleController,
} from "../../../code/controllers/nodelifecycle/node-lifecycle-controller.ts";
import { waitFor } from "../../../code/testing/wait-for.ts";
import { nodeHealthVerdict } from "./node-health.ts";

const s = 1000;
const hour = 3600 * s;
const grace = { nodeMonitorGracePeriodMs: 50 * s, nodeStartupGracePeriodMs: 60 * s };
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
const microTime = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");

describe("nodeHealthVerdict alone", () => {
  const T = Date.UTC(2026, 11, 7, 4, 0, 0);
  const readyAt = (heartbeat: number, transition = T - hour): NodeCondition => ({
    type: "Ready",
    status: "True",
    lastHeartbeatTime: iso(heartbeat),
    lastTransitionTime: iso(transition),
  });
  const node = (ready?: NodeCondition): Node => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "n1", creationTimestamp: iso(T - 2 * hour) },
    status: ready ? { conditions: [ready] } : {},
  });

  it("first sight: the grace period counts from now (our clock), not from the kubelet's heartbeat", () => {
    const v = nodeHealthVerdict(undefined, node(readyAt(T - hour)), undefined, T, grace);
    expect(v.overdue).toBe(false);
    expect(v.gracePeriodMs).toBe(50 * s);
    expect(v.health.probeTimestamp).toBe(T);
    expect(v.observedReadyCondition).toMatchObject({ type: "Ready", status: "True" });
  });

  it("no new status and no Lease: overdue strictly after probeTimestamp + 50 s", () => {
    const n = node(readyAt(T));
    const first = nodeHealthVerdict(undefined, n, undefined, T, grace).health;
    expect(nodeHealthVerdict(first, n, undefined, T + 50 * s, grace).overdue).toBe(false);
    const late = nodeHealthVerdict(first, n, undefined, T + 50 * s + 1, grace);
    expect(late.overdue).toBe(true);
    expect(late.health.probeTimestamp).toBe(T);
    expect(late.why).not.toBe("");
  });

  it("a new lastHeartbeatTime moves probeTimestamp to now; a new lastTransitionTime moves readyTransitionTimestamp", () => {
    const first = nodeHealthVerdict(undefined, node(readyAt(T)), undefined, T, grace).health;
    const posted = nodeHealthVerdict(first, node(readyAt(T + 40 * s)), undefined, T + 45 * s, grace).health;
    expect(posted).toMatchObject({ probeTimestamp: T + 45 * s, readyTransitionTimestamp: T });
    const flipped = nodeHealthVerdict(
      posted,
      node(readyAt(T + 50 * s, T + 50 * s)),
      undefined,
      T + 52 * s,
      grace,
    );
    expect(flipped.health).toMatchObject({
      probeTimestamp: T + 52 * s,
      readyTransitionTimestamp: T + 52 * s,
    });
  });

  it("a Lease renewTime not seen before is a heartbeat; the same one again is not", () => {
    const n = node(readyAt(T));
    const first = nodeHealthVerdict(undefined, n, T - 5 * hour, T, grace).health;
    const renewed = nodeHealthVerdict(first, n, T - 5 * hour + 10 * s, T + 40 * s, grace);
    expect(renewed.health).toMatchObject({
      probeTimestamp: T + 40 * s,
      leaseRenewTime: T - 5 * hour + 10 * s,
    });
    expect(nodeHealthVerdict(renewed.health, n, T - 5 * hour + 10 * s, T + 90 * s, grace).overdue).toBe(
      false,
    );
    const stale = nodeHealthVerdict(renewed.health, n, T - 5 * hour + 10 * s, T + 90 * s + 1, grace);
    expect(stale.overdue).toBe(true);
  });

  it("no Ready condition yet: the startup grace period (60 s), counted from the Node's creation", () => {
    const created = T - 2 * hour;
    const v = nodeHealthVerdict(undefined, node(), undefined, created + 60 * s, grace);
    expect(v.gracePeriodMs).toBe(60 * s);
    expect(v.overdue).toBe(false);
    expect(v.observedReadyCondition).toMatchObject({ type: "Ready", status: "Unknown" });
    expect(nodeHealthVerdict(v.health, node(), undefined, created + 60 * s + 1, grace).overdue).toBe(true);
  });
});

describe("inside the real node lifecycle controller", () => {
  let server: APIServer;
  let client: Clientset;
  let seq = 0;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
  });
  afterAll(async () => {
    client?.closeIdleConnections();
    await server?.close();
  });

  const leases = () => client.coordinationV1.leases("kube-node-lease");
  const ready = async (name: string) =>
    (await client.coreV1.nodes().get(name)).status?.conditions?.find((c) => c.type === "Ready");

  /** A controller of its own (on a FakeClock starting now, where the API server's times are) with your verdict. */
  async function cluster() {
    const clock = new FakeClock(Date.now());
    const abort = new AbortController();
    const factory: SharedInformerFactory = newSharedInformerFactory(client, 0);
    const controller: NodeLifecycleController = newNodeLifecycleController(
      { informerFactory: factory, log: () => {}, config: defaultControllerManagerConfig },
      client,
      { clock, recorder: () => {}, podRecorder: () => {}, nodeHealthVerdict },
    );
    factory.start(abort.signal);
    await factory.waitForCacheSync(abort.signal);
    const names: string[] = [];

    /** The informers' caches hold what the server holds (nodes and leases, by resourceVersion). */
    const caughtUp = () =>
      waitFor("the informers to catch up", async () => {
        const same = async (gvr: GroupVersionResource, list: () => Promise<{ items: KubeObject[] }>) => {
          const cached = factory.lister(gvr).list();
          const items = (await list()).items;
          return (
            items.length === cached.length &&
            items.every((o) =>
              cached.some(
                (c) =>
                  c.metadata.uid === o.metadata.uid &&
                  c.metadata.resourceVersion === o.metadata.resourceVersion,
              ),
            )
          );
        };
        return (
          (await same(Resources.nodes, () => client.coreV1.nodes().list())) &&
          (await same(Resources.leases, () => leases().list()))
        );
      });

    /** A kubelet whose clock is `skew` off ours: it registers, and posts status or renews its Lease when told. */
    const kubelet = async (skew = 0, postStatus = true) => {
      const name = `node-health-${++seq}`;
      names.push(name);
      await client.coreV1
        .nodes()
        .create({ apiVersion: "v1", kind: "Node", metadata: { name }, spec: {} } as Node);
      const created = Date.parse((await client.coreV1.nodes().get(name)).metadata.creationTimestamp ?? "");
      let lease: Lease | undefined;
      const k = {
        name,
        created,
        async postStatus() {
          const node = await client.coreV1.nodes().get(name);
          const t = iso(clock.now() + skew);
          const old = node.status?.conditions?.find((c) => c.type === "Ready");
          node.status = {
            conditions: [
              {
                type: "Ready",
                status: "True",
                reason: "KubeletReady",
                lastHeartbeatTime: t,
                lastTransitionTime: old?.lastTransitionTime ?? t,
              },
            ],
          };
          await client.coreV1.nodes().updateStatus(node);
        },
        async renew() {
          const renewTime = microTime(clock.now() + skew);
          lease = lease
            ? await leases().update({ ...lease, spec: { ...lease.spec, renewTime } })
            : await leases().create({
                apiVersion: "coordination.k8s.io/v1",
                kind: "Lease",
                metadata: { name },
                spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
              } as Lease);
        },
      };
      if (postStatus) await k.postStatus();
      return k;
    };

    /** One monitor pass at the clock's time, on caches that caught up with the server. */
    const pass = async () => {
      await caughtUp();
      await controller.monitorNodeHealth();
    };

    const stop = async () => {
      abort.abort();
      controller.podUpdateQueue.shutDown();
      controller.nodeUpdateQueue.shutDown();
      await factory.shutdown();
      for (const name of names) {
        await client.coreV1
          .nodes()
          .delete(name)
          .catch(() => {});
        await leases()
          .delete(name)
          .catch(() => {});
      }
    };
    return { clock, kubelet, pass, stop };
  }

  it("a kubelet that posted status once goes Unknown 50 s after the controller saw it, not at 50 s", async () => {
    const c = await cluster();
    try {
      const k = await c.kubelet();
      await c.pass(); // first sight: the grace period starts now
      c.clock.step(50 * s);
      await c.pass();
      expect((await ready(k.name))?.status).toBe("True");
      c.clock.step(1);
      await c.pass();
      expect(await ready(k.name)).toMatchObject({
        status: "Unknown",
        reason: "NodeStatusUnknown",
        message: "Kubelet stopped posting node status.",
      });
    } finally {
      await c.stop();
    }
  });

  it("Lease renewals alone keep a node Ready for minutes; when they stop, Unknown 50 s after the last one seen", async () => {
    const c = await cluster();
    try {
      const k = await c.kubelet();
      await k.renew();
      await c.pass();
      for (let i = 0; i < 12; i++) {
        c.clock.step(10 * s); // 120 s in all, no status write at all
        await k.renew();
        await c.pass();
        expect((await ready(k.name))?.status).toBe("True");
      }
      const lastSeen = c.clock.now();
      for (const t of [20, 40, 50]) {
        c.clock.setTime(lastSeen + t * s);
        await c.pass();
        expect((await ready(k.name))?.status, `${t} s after the last renewal`).toBe("True");
      }
      c.clock.setTime(lastSeen + 50 * s + 1);
      await c.pass();
      expect((await ready(k.name))?.status).toBe("Unknown");
    } finally {
      await c.stop();
    }
  });

  it("the kubelet's own clock does not matter: an hour behind and renewing stays Ready, an hour ahead and silent goes Unknown", async () => {
    const c = await cluster();
    try {
      const behind = await c.kubelet(-hour);
      const ahead = await c.kubelet(hour);
      await behind.renew();
      await ahead.renew();
      await c.pass();
      for (let i = 0; i < 6; i++) {
        c.clock.step(10 * s);
        await behind.renew();
        await c.pass();
        expect((await ready(behind.name))?.status).toBe("True");
        expect((await ready(ahead.name))?.status).toBe(i < 5 ? "True" : "Unknown");
      }
    } finally {
      await c.stop();
    }
  });

  it("a Node that never posted status gets the startup grace period (60 s) from its creation", async () => {
    const c = await cluster();
    try {
      const k = await c.kubelet(0, false);
      c.clock.setTime(k.created + 55 * s);
      await c.pass();
      expect(await ready(k.name)).toBeUndefined();
      c.clock.setTime(k.created + 60 * s + 1);
      await c.pass();
      expect(await ready(k.name)).toMatchObject({ status: "Unknown", reason: "NodeStatusNeverUpdated" });
    } finally {
      await c.stop();
    }
  });
});
