/**
 * The node lifecycle controller's passes driven by hand on a FakeClock, over real informers and
 * a real API server: a node that never posted status is judged after the startup grace period
 * ("NodeStatusNeverUpdated"); a kubelet that reports NotReady gets the not-ready taints (a
 * kubelet that goes silent gets the unreachable ones — node-lifecycle.test.ts); a pod bound to a
 * node already known not Ready is marked not Ready at once; a Lease renewal alone keeps a node
 * Ready past the grace period.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Lease } from "../../api/coordination.ts";
import type { Node, NodeCondition, Pod, Taint } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import type { GroupVersionResource } from "../../api/schema.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { newSharedInformerFactory, Resources } from "../../client/informers/factory.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import type { SharedInformerFactory } from "../../client/tools/cache/informer-factory.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { runWorkers } from "../../client/util/workqueue/worker.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { defaultControllerManagerConfig } from "../controller-context.ts";
import { type NodeLifecycleController, newNodeLifecycleController } from "./node-lifecycle-controller.ts";

describe("the node lifecycle controller on a FakeClock", () => {
  let server: APIServer;
  let client: Clientset;
  let factory: SharedInformerFactory;
  let controller: NodeLifecycleController;
  const abort = new AbortController();
  let podWorkers: Promise<void>;
  // The clock starts where the API server's timestamps are: now.
  const clock = new FakeClock(Date.now());
  const microTime = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");
  const ready = async (name: string) =>
    (await client.coreV1.nodes().get(name)).status?.conditions?.find((c) => c.type === "Ready");
  const taints = async (name: string): Promise<Taint[]> =>
    (await client.coreV1.nodes().get(name)).spec?.taints ?? [];
  /** The informers' caches hold what the server holds (nodes and leases, by resourceVersion). */
  const cachesCaughtUp = () =>
    waitFor("the informers to catch up", async () => {
      const check = async (gvr: GroupVersionResource, list: () => Promise<{ items: KubeObject[] }>) => {
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
        (await check(Resources.nodes, () => client.coreV1.nodes().list())) &&
        (await check(Resources.leases, () => client.coordinationV1.leases("kube-node-lease").list()))
      );
    });
  /** One pass as the monitor loop would run it, on what the caches show once they caught up. */
  const pass = async () => {
    await cachesCaughtUp();
    await controller.monitorNodeHealth();
    await controller.doNoExecuteTaintingPass();
  };
  const postStatus = async (name: string, status: NodeCondition["status"]) => {
    const node = await client.coreV1.nodes().get(name);
    const t = iso(clock.now());
    node.status = {
      conditions: [
        { type: "Ready", status, reason: "KubeletNotReady", lastHeartbeatTime: t, lastTransitionTime: t },
      ],
    };
    await client.coreV1.nodes().updateStatus(node);
  };

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
    factory = newSharedInformerFactory(client, 0);
    controller = newNodeLifecycleController(
      {
        informerFactory: factory,
        log: () => {},
        config: {
          ...defaultControllerManagerConfig,
          nodeEvictionRate: 1000, // the taint queue is not what this test is about
        },
      },
      client,
      { clock, recorder: () => {}, podRecorder: () => {} },
    );
    factory.start(abort.signal);
    await factory.waitForCacheSync(abort.signal);
  });

  afterAll(async () => {
    abort.abort();
    controller.podUpdateQueue.shutDown();
    controller.nodeUpdateQueue.shutDown();
    await podWorkers;
    await factory.shutdown();
    client?.closeIdleConnections();
    await server?.close();
  });

  it("judges a node that never posted status after the startup grace period (60 s), not before", async () => {
    await client.coreV1
      .nodes()
      .create({ apiVersion: "v1", kind: "Node", metadata: { name: "silent" }, spec: {} } as Node);
    const created = Date.parse((await client.coreV1.nodes().get("silent")).metadata.creationTimestamp ?? "");
    clock.setTime(created + 59_000);
    await pass();
    expect(await ready("silent")).toBeUndefined();
    clock.setTime(created + 61_000);
    await pass();
    expect(await ready("silent")).toMatchObject({
      status: "Unknown",
      reason: "NodeStatusNeverUpdated",
      message: "Kubelet never posted node status.",
    });
  });

  it("taints a node whose kubelet reports NotReady with not-ready, and marks a pod bound there not ready", async () => {
    await client.coreV1
      .nodes()
      .create({ apiVersion: "v1", kind: "Node", metadata: { name: "sick" }, spec: {} } as Node);
    // A healthy node too: were every node not Ready, the controller would suspect its own
    // network and stop tainting altogether (master disruption mode, zone-tainters.ts).
    await client.coreV1
      .nodes()
      .create({ apiVersion: "v1", kind: "Node", metadata: { name: "healthy" }, spec: {} } as Node);
    await postStatus("healthy", "True");
    await postStatus("sick", "True");
    await pass();
    clock.step(1_000);
    await postStatus("healthy", "True");
    await postStatus("sick", "False");
    await pass(); // sees False: queued for the not-ready taint
    // The queue hands out one node per token (the silent node of the first test is queued too).
    await waitFor("not-ready:NoExecute on sick", async () => {
      clock.step(10);
      await controller.doNoExecuteTaintingPass();
      return (await taints("sick")).some(
        (t) => t.key === "node.kubernetes.io/not-ready" && t.effect === "NoExecute",
      );
    });
    expect((await taints("silent")).some((t) => t.key === "node.kubernetes.io/unreachable")).toBe(true);
    // A pod newly bound to the sick node: the pod worker marks it not ready on its own.
    podWorkers = runWorkers(controller.podUpdateQueue, 1, (key) => controller.processPod(key), abort.signal);
    const pod = await client.coreV1.pods("default").create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "late" },
      spec: { containers: [{ name: "c", image: "course/sleeper" }] },
    } as Pod);
    await client.coreV1.pods("default").updateStatus({
      ...pod,
      status: {
        phase: "Pending",
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: iso(clock.now()) }],
      },
    });
    await client.coreV1.pods("default").bind({
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: "late", namespace: "default" },
      target: { kind: "Node", name: "sick" },
    });
    // The binding (nodeName set) is what the controller reacts to.
    await waitFor("late marked not ready", async () => {
      const p = await client.coreV1.pods("default").get("late");
      return p.status?.conditions?.find((c) => c.type === "Ready")?.status === "False";
    });
  });

  it("keeps a node Ready past the grace period as long as its Lease is renewed", async () => {
    await client.coreV1
      .nodes()
      .create({ apiVersion: "v1", kind: "Node", metadata: { name: "quiet" }, spec: {} } as Node);
    await postStatus("quiet", "True");
    const lease = await client.coordinationV1.leases("kube-node-lease").create({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "quiet" },
      spec: { holderIdentity: "quiet", leaseDurationSeconds: 40, renewTime: microTime(clock.now()) },
    } as Lease);
    await pass();
    let current = lease;
    for (let i = 1; i <= 4; i++) {
      clock.step(20_000); // 80 s in all, well past the 50 s grace period; no status write
      current = await client.coordinationV1.leases("kube-node-lease").update({
        ...current,
        spec: { ...current.spec, renewTime: microTime(clock.now()) },
      });
      await pass();
      expect((await ready("quiet"))?.status).toBe("True");
    }
    // The renewals stop: 50 s later it is Unknown.
    clock.step(50_001);
    await pass();
    expect(await ready("quiet")).toMatchObject({ status: "Unknown", reason: "NodeStatusUnknown" });
  });
});
