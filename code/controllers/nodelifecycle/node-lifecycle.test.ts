/**
 * A node that stops heartbeating, end to end: the real API server, the real scheduler and the
 * controller-manager's ReplicaSet, Endpoints, node lifecycle and taint-eviction controllers
 * (periods shortened through their configuration, as the flags would). Kubelets are simulated
 * by the test: each renews its node's Lease and reports its pods Running and Ready with an IP,
 * as a kubelet would, until it is stopped.
 *
 * Proves: the silent node goes Ready=Unknown ("NodeStatusUnknown", "Kubelet stopped posting
 * node status.") after the grace period; gets `unreachable:NoExecute` and `:NoSchedule`; its
 * pods turn not Ready and leave the Service's ready addresses; a pod without a toleration is
 * evicted at once, the ReplicaSet's pods after their tolerationSeconds, a pod tolerating forever
 * never; evicted pods carry DisruptionTarget and a TaintManagerEviction event; the ReplicaSet
 * replaces them on the healthy node; and the taints come off when the kubelet comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReplicaSet } from "../../api/apps.ts";
import type { Lease } from "../../api/coordination.ts";
import type { Endpoints, NodeCondition, Pod, Taint } from "../../api/core.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { isAlreadyExists } from "../../client/errors.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { type KubeScheduler, newScheduler } from "../../scheduler/scheduler.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { type RunningControllerManager, startControllerManager } from "../controller-manager.ts";
import { endpoints } from "../endpoint/endpoints-controller.ts";

const ns = "default";
const nowTime = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");
const microTime = () => new Date().toISOString().replace("Z", "000Z");

/** What a kubelet does for the control plane: register, renew the Lease, report its pods. */
class SimulatedKubelet {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private nextIP = 10;

  constructor(
    private readonly client: Clientset,
    readonly name: string,
    private readonly subnet: number,
  ) {}

  async register(): Promise<void> {
    await this.client.coreV1.nodes().create({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: this.name, labels: { "kubernetes.io/hostname": this.name } },
      spec: {},
    });
    await this.postStatus();
    try {
      await this.client.coordinationV1.leases("kube-node-lease").create({
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: this.name },
        spec: { holderIdentity: this.name, leaseDurationSeconds: 40, renewTime: microTime() },
      } as Lease);
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
  }

  /** updateNodeStatus: Ready with a fresh heartbeat. */
  async postStatus(): Promise<void> {
    const node = await this.client.coreV1.nodes().get(this.name);
    const t = nowTime();
    const old = node.status?.conditions?.find((c) => c.type === "Ready");
    const cond = (type: string, status: NodeCondition["status"], reason: string): NodeCondition => ({
      type,
      status,
      reason,
      lastHeartbeatTime: t,
      lastTransitionTime: type === "Ready" && old?.status === status ? old.lastTransitionTime : t,
    });
    node.status = {
      ...node.status,
      capacity: { cpu: "4", memory: "8Gi", pods: "110" },
      allocatable: { cpu: "4", memory: "8Gi", pods: "110" },
      conditions: [
        cond("MemoryPressure", "False", "KubeletHasSufficientMemory"),
        cond("DiskPressure", "False", "KubeletHasNoDiskPressure"),
        cond("PIDPressure", "False", "KubeletHasSufficientPID"),
        cond("Ready", "True", "KubeletReady"),
      ],
    };
    await this.client.coreV1.nodes().updateStatus(node);
  }

  private async tick(): Promise<void> {
    const lease = await this.client.coordinationV1.leases("kube-node-lease").get(this.name);
    await this.client.coordinationV1
      .leases("kube-node-lease")
      .update({ ...lease, spec: { ...lease.spec, renewTime: microTime() } });
    const pods = await this.client.coreV1.pods("").list({ fieldSelector: `spec.nodeName=${this.name}` });
    for (const pod of pods.items) {
      if (pod.metadata.deletionTimestamp || pod.status?.podIP) continue;
      const ip = `10.244.${this.subnet}.${this.nextIP++}`;
      const t = nowTime();
      await this.client.coreV1.pods(pod.metadata.namespace ?? ns).updateStatus({
        ...pod,
        status: {
          ...pod.status,
          phase: "Running",
          podIP: ip,
          podIPs: [{ ip }],
          conditions: [
            ...(pod.status?.conditions ?? []).filter((c) => c.type === "PodScheduled"),
            { type: "Ready", status: "True", lastTransitionTime: t },
          ],
        },
      });
    }
  }

  start(): void {
    const loop = () => {
      this.ticking = this.tick()
        .catch(() => {})
        .then(() => {
          if (this.timer) this.timer = setTimeout(loop, 200);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  /** The kubelet dies: no more Lease renewals, no more status. */
  async stop(): Promise<void> {
    const t = this.timer;
    this.timer = undefined;
    clearTimeout(t);
    await this.ticking;
  }
}

describe("the node lifecycle and taint-eviction controllers", () => {
  let server: APIServer;
  let client: Clientset;
  let manager: RunningControllerManager;
  let scheduler: KubeScheduler | undefined;
  const logs: string[] = [];
  let n1: SimulatedKubelet;
  let n2: SimulatedKubelet;

  const podsOn = async (node: string) =>
    (await client.coreV1.pods(ns).list({ fieldSelector: `spec.nodeName=${node}` })).items;
  const readyOf = (p: Pod) => p.status?.conditions?.find((c) => c.type === "Ready")?.status;
  const taintsOf = async (node: string) => (await client.coreV1.nodes().get(node)).spec?.taints ?? [];
  const hasTaint = (ts: Taint[], key: string, effect: string) =>
    ts.some((t) => t.key === key && t.effect === effect);
  const readyIPs = async () => {
    const ep = await client.resource<Endpoints>(endpoints, ns).get("web");
    return (ep.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
  };
  const shortToleration = (seconds?: number) =>
    ["node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"].map((key) => ({
      key,
      operator: "Exists" as const,
      effect: "NoExecute" as const,
      ...(seconds === undefined ? {} : { tolerationSeconds: seconds }),
    }));

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
    // kube-node-lease exists from the start: the API server makes it, as upstream's does.
    n2 = new SimulatedKubelet(client, "n2", 2);
    await n2.register();
    n2.start();
    manager = await startControllerManager({
      client,
      controllers: [
        "replicaset-controller",
        "endpoints-controller",
        "node-lifecycle-controller",
        "taint-eviction-controller",
      ],
      config: {
        nodeMonitorPeriodMs: 200,
        nodeMonitorGracePeriodMs: 2_000,
        nodeStartupGracePeriodMs: 4_000,
        nodeEvictionRate: 50,
      },
      log: (l) => logs.push(l),
    });
    expect(await manager.synced).toBe(true);
    scheduler = newScheduler({ client });
    expect(await scheduler.start()).toBe(true);
  });

  afterAll(async () => {
    await n1?.stop();
    await n2?.stop();
    await scheduler?.stop();
    await manager?.stop();
    client?.closeIdleConnections();
    await server?.close();
  });

  it("evicts the pods of a silent node after their tolerations and the ReplicaSet replaces them elsewhere", async () => {
    await client.coreV1.services(ns).create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: { selector: { app: "web" }, clusterIP: "10.96.0.20", ports: [{ port: 80, targetPort: 8080 }] },
    });
    await client.appsV1.replicaSets(ns).create({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web" },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: { containers: [{ name: "web", image: "course/web" }], tolerations: shortToleration(3) },
        },
      },
    } as ReplicaSet);
    const pinned = (name: string, tolerations: ReturnType<typeof shortToleration>) =>
      client.coreV1.pods(ns).create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name },
        spec: { nodeName: "n2", containers: [{ name: "c", image: "course/sleeper" }], tolerations },
      } as Pod);
    await pinned("intolerant", []);
    await pinned("forever", shortToleration());

    // Only n2 exists: everything runs there and is ready.
    await waitFor("web pods ready on n2", async () => {
      const pods = (await podsOn("n2")).filter((p) => p.metadata.labels?.app === "web");
      return pods.length === 2 && pods.every((p) => readyOf(p) === "True");
    });
    const before = await waitFor("two ready endpoints", async () => {
      const ips = await readyIPs();
      return ips.length === 2 ? ips : undefined;
    });
    expect(before.every((ip) => ip.startsWith("10.244.2."))).toBe(true);

    n1 = new SimulatedKubelet(client, "n1", 1);
    await n1.register();
    n1.start();
    await n2.stop();

    // Past the grace period: Unknown, with upstream's reason and message.
    const ready = await waitFor(
      "n2 Ready=Unknown",
      async () => {
        const c = (await client.coreV1.nodes().get("n2")).status?.conditions?.find((x) => x.type === "Ready");
        return c?.status === "Unknown" ? c : undefined;
      },
      30_000,
    );
    expect(ready).toMatchObject({
      reason: "NodeStatusUnknown",
      message: "Kubelet stopped posting node status.",
    });
    const mem = (await client.coreV1.nodes().get("n2")).status?.conditions?.find(
      (x) => x.type === "MemoryPressure",
    );
    expect(mem?.status).toBe("Unknown");
    // n1 keeps renewing its Lease: it stays Ready.
    const n1Ready = (await client.coreV1.nodes().get("n1")).status?.conditions?.find(
      (x) => x.type === "Ready",
    );
    expect(n1Ready?.status).toBe("True");

    const taints = await waitFor("n2 tainted", async () => {
      const ts = await taintsOf("n2");
      return hasTaint(ts, "node.kubernetes.io/unreachable", "NoExecute") &&
        hasTaint(ts, "node.kubernetes.io/unreachable", "NoSchedule")
        ? ts
        : undefined;
    });
    const taintAdded = Date.parse(
      taints.find((t) => t.key === "node.kubernetes.io/unreachable" && t.effect === "NoExecute")?.timeAdded ??
        "",
    );
    expect(Number.isNaN(taintAdded)).toBe(false);

    // Every pod of n2 is evicted or not as its tolerations say; meanwhile the ReplicaSet's
    // replacements run on n1 and the Service points there.
    const disruption = (p: Pod) => p.status?.conditions?.find((c) => c.type === "DisruptionTarget");
    const evicted = await waitFor(
      "n2's web pods and the intolerant pod marked for deletion",
      async () => {
        const pods = await podsOn("n2");
        const marked = pods.filter((p) => p.metadata.deletionTimestamp && disruption(p));
        return marked.length === 3 ? marked : undefined;
      },
      30_000,
    );
    for (const p of evicted) {
      expect(disruption(p)).toMatchObject({
        status: "True",
        reason: "DeletionByTaintManager",
        message: "Taint manager: deleting due to NoExecute taint",
      });
      // Marked not ready first (MarkPodsNotReady), since its kubelet cannot say so.
      expect(readyOf(p)).toBe("False");
    }
    const at = (name: string) =>
      Date.parse(disruption(evicted.find((p) => p.metadata.name === name) as Pod)?.lastTransitionTime ?? "");
    const webTimes = evicted
      .filter((p) => p.metadata.labels?.app === "web")
      .map((p) => at(p.metadata.name ?? ""));
    // The tolerating pods waited their 3 s from the taint (times are whole seconds); the intolerant one did not.
    for (const t of webTimes) expect(t).toBeGreaterThanOrEqual(taintAdded + 2_000);
    for (const t of webTimes) expect(at("intolerant")).toBeLessThan(t);
    const forever = (await podsOn("n2")).find((p) => p.metadata.name === "forever");
    expect(forever?.metadata.deletionTimestamp).toBeUndefined();

    const events = await client.coreV1.events(ns).list();
    const messages = events.items.filter((e) => e.reason === "TaintManagerEviction").map((e) => e.message);
    expect(messages).toContain("Marking for deletion Pod default/intolerant");
    for (const p of evicted)
      expect(messages).toContain(`Marking for deletion Pod default/${p.metadata.name}`);
    expect(events.items.some((e) => e.reason === "NodeNotReady" && e.message === "Node is not ready")).toBe(
      true,
    );

    const after = await waitFor(
      "the Service's ready endpoints on n1",
      async () => {
        const ips = await readyIPs();
        return ips.length === 2 && ips.every((ip) => ip.startsWith("10.244.1.")) ? ips : undefined;
      },
      30_000,
    );
    expect(after).toHaveLength(2);

    // The kubelet comes back: a fresh status and Lease; the taints come off.
    await n2.postStatus();
    n2.start();
    await waitFor(
      "n2 untainted",
      async () => {
        const ts = await taintsOf("n2");
        return !ts.some((t) => t.key === "node.kubernetes.io/unreachable") ? true : undefined;
      },
      30_000,
    );
  });

  it("registers the controllers under upstream's names", () => {
    expect(manager.started).toEqual([
      "replicaset-controller",
      "endpoints-controller",
      "node-lifecycle-controller",
      "taint-eviction-controller",
    ]);
  });
});
