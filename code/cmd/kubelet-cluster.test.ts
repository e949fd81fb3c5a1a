/**
 * Chapter 7's proofs that need more than one node and the controller-manager, all as separate
 * processes driven by the real kubectl: a readiness probe moving a pod out of its Service's
 * Endpoints and back; the Node authorizer keeping a kubelet to its own node; and a kubelet that
 * stops — its node goes Unknown, is tainted, its pods are evicted after their toleration and their
 * ReplicaSet recreates them on the other node.
 *
 * Durations are upstream's mechanisms with shorter values, set the way an operator would: the
 * kubelets' `--config` (nodeLeaseDurationSeconds 4, so the Lease is renewed every second) and
 * kube-controller-manager's `--node-monitor-period` and `--node-monitor-grace-period`; the pods'
 * own tolerationSeconds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ReplicaSet } from "../api/apps.ts";
import type { Endpoints, Pod, Service } from "../api/core.ts";
import { newForConfig } from "../client/kubernetes/clientset.ts";
import { MergePatchType } from "../client/rest/request.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { waitFor } from "../testing/wait-for.ts";
import { LocalCluster } from "./testing/local-cluster.ts";

let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.start({
    nodes: ["node-1", "node-2"],
    kubeletConfig: [
      "apiVersion: kubelet.config.k8s.io/v1beta1",
      "kind: KubeletConfiguration",
      "nodeLeaseDurationSeconds: 4",
      "nodeStatusUpdateFrequency: 1s",
      "nodeStatusReportFrequency: 1s",
      "",
    ].join("\n"),
    controllerManagerArgs: [
      "--use-service-account-credentials",
      "--node-monitor-period=500ms",
      "--node-monitor-grace-period=5s",
    ],
  });
}, 180_000);

afterAll(async () => {
  await cluster?.close();
}, 60_000);

/** The last lines of every kubelet and of the controller-manager, for a timeout's message. */
function diagnostics(): string {
  const logs = [...cluster.kubelets.values()].map(
    (k) => `--- ${k.name}:\n${k.process.stderr().slice(-1500)}`,
  );
  return `${logs.join("\n")}\n--- kcm:\n${cluster.controllerManager?.stderr().slice(-2000)}`;
}

/** waitFor, and on a timeout with every kubelet's and the controller-manager's last lines. */
function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  return waitFor(what, check, timeoutMs).catch((err: Error) => {
    throw new Error(`${err.message}\n${diagnostics()}`);
  });
}

const pods = () => cluster.admin.coreV1.pods("default");
const ready = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

describe("readiness and Service endpoints", () => {
  it("a pod whose readiness probe fails leaves its Service's endpoints, and comes back when it passes", async () => {
    const svc: Service = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "default" },
      spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
    };
    await cluster.admin.coreV1.services("default").create(svc);
    await pods().create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", namespace: "default", labels: { app: "web" } },
      spec: {
        containers: [
          {
            name: "web",
            image: "course/web:1.0",
            ports: [{ containerPort: 8080 }],
            readinessProbe: { httpGet: { path: "/readyz", port: 8080 }, periodSeconds: 1 },
          },
        ],
      },
    });
    const p = await eventually(async () => {
      const got = await pods().get("web-1");
      return ready(got) ? got : undefined;
    }, "web-1 Ready");
    const ip = p.status?.podIP ?? "";
    const endpoints = () =>
      cluster.admin
        .resource<Endpoints>({ group: "", version: "v1", resource: "endpoints" }, "default")
        .get("web");
    const where = async () => {
      const ep = await endpoints();
      const s = ep.subsets?.[0];
      if (s?.addresses?.some((a) => a.ip === ip)) return "ready";
      if (s?.notReadyAddresses?.some((a) => a.ip === ip)) return "notReady";
      return "absent";
    };
    await eventually(async () => ((await where()) === "ready" ? true : undefined), "web-1 in the endpoints");
    const got = await cluster.kubectl(["get", "endpoints", "web"]);
    expect(got.stdout).toContain(`${ip}:8080`);

    expect((await cluster.kubectl(["exec", "web-1", "--", "touch", "/tmp/unready"])).code).toBe(0);
    await eventually(async () => ((await where()) === "notReady" ? true : undefined), "web-1 not ready");
    expect((await cluster.kubectl(["get", "endpoints", "web"])).stdout).not.toContain(ip);
    const unready = await pods().get("web-1");
    expect(unready.status?.containerStatuses?.[0]?.ready).toBe(false);
    expect(unready.status?.phase).toBe("Running"); // not ready is not dead: no restart
    expect(unready.status?.containerStatuses?.[0]?.restartCount).toBe(0);

    expect((await cluster.kubectl(["exec", "web-1", "--", "rm", "/tmp/unready"])).code).toBe(0);
    await eventually(
      async () => ((await where()) === "ready" ? true : undefined),
      "web-1 back in the endpoints",
    );
  });
});

describe("the Node authorizer", () => {
  it("a kubelet's identity reads and writes only what its own node needs", async () => {
    await pods().create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "on-two", namespace: "default" },
      spec: { nodeName: "node-2", containers: [{ name: "app", image: "course/sleeper:1.0" }] },
    });
    const asNode1 = (args: string[]) =>
      cluster.kubectl([`--kubeconfig=${cluster.identity("node-node-1").kubeconfig}`, ...args]);
    const read = await asNode1(["get", "pod", "on-two"]);
    expect(read.code).not.toBe(0);
    expect(read.stderr).toContain(
      `pods "on-two" is forbidden: User "system:node:node-1" cannot get resource "pods" in API group "" in the namespace "default": no relationship found between node 'node-1' and this object`,
    );
    // kubectl's `patch --subresource=status` first GETs nodes/status, which no node may: write
    // with the kubelet's own client, as the kubelet does.
    const node1 = newForConfig(buildConfigFromFlags("", cluster.identity("node-node-1").kubeconfig, {}));
    try {
      const write = (name: string) =>
        node1.coreV1
          .nodes()
          .patch(name, MergePatchType, { metadata: { labels: { touched: "yes" } } }, {}, "status")
          .then(
            () => "ok",
            (err: Error) => err.message,
          );
      expect(await write("node-2")).toBe(
        'nodes "node-2" is forbidden: node "node-1" is not allowed to modify node "node-2"',
      );
      expect(await write("node-1")).toBe("ok");
    } finally {
      node1.closeIdleConnections();
    }
    const own = await asNode1(["get", "node", "node-1"]);
    expect(own.code, own.stderr).toBe(0);
  });
});

describe("a node whose kubelet stops", () => {
  it("goes Unknown, is tainted unreachable, and its pods are evicted and recreated on the other node", async () => {
    const toleration = (key: string) => ({
      key,
      operator: "Exists" as const,
      effect: "NoExecute" as const,
      tolerationSeconds: 2,
    });
    const rs: ReplicaSet = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "sleepers", namespace: "default" },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: "sleepers" } },
        template: {
          metadata: { labels: { app: "sleepers" } },
          spec: {
            terminationGracePeriodSeconds: 1,
            tolerations: [
              toleration("node.kubernetes.io/unreachable"),
              toleration("node.kubernetes.io/not-ready"),
            ],
            containers: [{ name: "app", image: "course/sleeper:1.0" }],
          },
        },
      },
    };
    await cluster.admin.appsV1.replicaSets("default").create(rs);
    const mine = async () =>
      (await pods().list({ labelSelector: "app=sleepers" })).items.filter(
        (p) => !p.metadata.deletionTimestamp,
      );
    const running = await eventually(async () => {
      const all = await mine();
      return all.length === 4 && all.every(ready) ? all : undefined;
    }, "4 sleepers Ready");
    // Stop the kubelet of a node that runs some of them (the scheduler spreads them).
    const victim = running[0].spec.nodeName as string;
    const survivor = victim === "node-1" ? "node-2" : "node-1";
    const onVictim = running.filter((p) => p.spec.nodeName === victim).map((p) => p.metadata.name);
    const k = cluster.kubelets.get(victim);
    k?.process.kill();
    await k?.process.waitForExit();
    const stoppedAt = Date.now();

    const node = await eventually(async () => {
      const n = await cluster.admin.coreV1.nodes().get(victim);
      const c = n.status?.conditions?.find((x) => x.type === "Ready");
      return c?.status === "Unknown" ? n : undefined;
    }, `${victim} Unknown`);
    const readyCond = node.status?.conditions?.find((x) => x.type === "Ready");
    expect(readyCond).toMatchObject({
      reason: "NodeStatusUnknown",
      message: "Kubelet stopped posting node status.",
    });
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(4000); // not before the grace period
    await eventually(async () => {
      const n = await cluster.admin.coreV1.nodes().get(victim);
      return n.spec?.taints?.some(
        (t) => t.key === "node.kubernetes.io/unreachable" && t.effect === "NoExecute",
      )
        ? true
        : undefined;
    }, `${victim} tainted unreachable:NoExecute`);

    // After their 2 s toleration the pods are deleted (they stay Terminating: no kubelet to finish
    // them), and the ReplicaSet makes new ones, which can only go to the survivor.
    const replaced = await eventually(
      async () => {
        const all = await mine();
        return all.length === 4 && all.every((p) => p.spec.nodeName === survivor && ready(p))
          ? all
          : undefined;
      },
      `4 sleepers Ready on ${survivor}`,
      90_000,
    );
    expect(replaced.map((p) => p.metadata.name)).not.toContain(onVictim[0]);
    const events = (await cluster.admin.coreV1.events("default").list()).items;
    expect(
      events.some((e) => e.reason === "TaintManagerEviction" && e.involvedObject.name === onVictim[0]),
    ).toBe(true);
  }, 150_000);
});
