/**
 * A kubelet's own requests under chapter 3's security: HTTPS with the PKI's client certificates,
 * `--authorization-mode=Node,RBAC` and the NodeRestriction admission plugin. The kubelet of node
 * `a` (user system:node:a, group system:nodes) registers and heartbeats its own Node and Lease, and
 * is refused — with upstream's messages — node `b`'s status and Lease and a pod bound to `b`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Lease } from "../api/coordination.ts";
import type { Node, Pod } from "../api/core.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { StatusError } from "../client/errors.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../client/rest/request.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { realClock } from "../client/util/clock.ts";
import { ensurePKI } from "../pki/certs.ts";
import { PKIError } from "../pki/errors.ts";
import { freePort } from "../testing/ports.ts";
import { type NodeStatusUpdater, startNodeStatusUpdater } from "./kubelet-node-status.ts";
import { type NodeLeaseController, startNodeLeaseController } from "./nodelease/controller.ts";
import type { MachineInfo } from "./nodestatus/setters.ts";

const machine: MachineInfo = {
  numCores: 2,
  memoryCapacity: 4 * 1024 ** 3,
  rootfsCapacity: 20 * 1024 ** 3,
  machineID: "",
  systemUUID: "",
  bootID: "boot",
  kernelVersion: "test",
  osImage: "test",
};

let dir: string;
let server: APIServer | undefined;
let admin: Clientset;
let kubeletA: Clientset;
let updater: NodeStatusUpdater | undefined;
let lease: NodeLeaseController | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "kubelet-node-authz-"));
  const port = await freePort();
  const pki = await ensurePKI({
    dir,
    nodes: ["a", "b"],
    server: `https://127.0.0.1:${port}`,
    encryptionAlgorithm: "ECDSA-P256",
  });
  if (pki instanceof PKIError) throw pki;
  const { layout } = pki;
  server = await startAPIServer({
    securePort: port,
    secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
    authentication: { clientCAFile: layout.caCert },
    authorizationModes: ["Node", "RBAC"],
    admission: { enablePlugins: ["NodeRestriction"] },
  });
  const kubeconfigOf = (id: string) => layout.identities.find((i) => i.id === id)?.kubeconfig as string;
  admin = newForConfig({ ...buildConfigFromFlags("", kubeconfigOf("admin")), qps: 1000, burst: 1000 });
  kubeletA = newForConfig({ ...buildConfigFromFlags("", kubeconfigOf("node-a")), qps: 1000, burst: 1000 });
}, 60_000);

afterAll(async () => {
  await updater?.stop();
  await lease?.stop();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function refusal(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error("expected the request to be refused");
}

describe("the kubelet of node a, as system:node:a", () => {
  it("registers and heartbeats its own Node and Lease", async () => {
    const lines: string[] = [];
    updater = startNodeStatusUpdater({
      client: kubeletA,
      clock: realClock,
      nodeName: "a",
      hostname: "a",
      kubeletPort: 10250,
      machine,
      runtimeType: "fake",
      log: (l) => lines.push(l),
      options: { nodeStatusUpdateFrequencyMs: 200, nodeStatusReportFrequencyMs: 600 },
    });
    lease = startNodeLeaseController({
      client: kubeletA,
      clock: realClock,
      nodeName: "a",
      leaseDurationSeconds: 2,
    });

    let node: Node | undefined;
    await vi.waitFor(
      async () => {
        node = await admin.coreV1.nodes().get("a");
        expect(node.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
      },
      { timeout: 30_000, interval: 100 },
    );
    // Heartbeats go on: the status is rewritten after the (shortened) report period …
    const rv = node?.metadata.resourceVersion;
    await vi.waitFor(
      async () => expect((await admin.coreV1.nodes().get("a")).metadata.resourceVersion).not.toBe(rv),
      {
        timeout: 30_000,
        interval: 100,
      },
    );
    // … and the Lease, owned by the Node, is renewed.
    let first: Lease | undefined;
    await vi.waitFor(
      async () => {
        first = await admin.coordinationV1.leases("kube-node-lease").get("a");
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(first?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "Node",
      name: "a",
      uid: node?.metadata.uid,
    });
    await vi.waitFor(
      async () =>
        expect((await admin.coordinationV1.leases("kube-node-lease").get("a")).spec?.renewTime).not.toBe(
          first?.spec?.renewTime,
        ),
      { timeout: 30_000, interval: 100 },
    );
    // (A first GET served by the watch cache may miss the just-created Node and be retried; that
    // is upstream's behaviour too. Giving up, or failing a setter, is not.)
    expect(lines.filter((l) => l.includes("Unable") || l.includes("Failed"))).toEqual([]);
  }, 90_000);

  it("is refused node b's status, node b's Lease and a pod bound to node b", async () => {
    await admin.coreV1.nodes().create({ apiVersion: "v1", kind: "Node", metadata: { name: "b" } });
    const leaseB = await admin.coordinationV1.leases("kube-node-lease").create({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "b", namespace: "kube-node-lease" },
      spec: { holderIdentity: "b", leaseDurationSeconds: 40 },
    });
    await admin.coreV1.pods("default").create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "on-b" },
      spec: { nodeName: "b", containers: [{ name: "c", image: "course/sleeper" }] },
    } as Pod);

    const status = await refusal(
      kubeletA.coreV1
        .nodes()
        .patch(
          "b",
          StrategicMergePatchType,
          { status: { conditions: [{ type: "Ready", status: "True" }] } },
          {},
          "status",
        ),
    );
    expect(status.code).toBe(403);
    expect(status.message).toBe('nodes "b" is forbidden: node "a" is not allowed to modify node "b"');

    const renew = await refusal(
      kubeletA.coordinationV1
        .leases("kube-node-lease")
        .update({ ...leaseB, spec: { ...leaseB.spec, renewTime: "x" } }),
    );
    expect(renew.code).toBe(403);
    expect(renew.message).toBe(
      'leases.coordination.k8s.io "b" is forbidden: User "system:node:a" cannot update resource "leases" in API group "coordination.k8s.io" in the namespace "kube-node-lease": can only access node lease with the same name as the requesting node',
    );

    const createB = await refusal(
      kubeletA.coordinationV1.leases("kube-node-lease").create({
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "b2", namespace: "kube-node-lease" },
        spec: { holderIdentity: "b2" },
      }),
    );
    expect(createB.code).toBe(403);
    expect(createB.message).toBe(
      'leases.coordination.k8s.io "b2" is forbidden: can only access node lease with the same name as the requesting node',
    );

    const pod = await refusal(kubeletA.coreV1.pods("default").get("on-b"));
    expect(pod.code).toBe(403);
    expect(pod.message).toBe(
      'pods "on-b" is forbidden: User "system:node:a" cannot get resource "pods" in API group "" in the namespace "default": no relationship found between node \'a\' and this object',
    );
  });
});
