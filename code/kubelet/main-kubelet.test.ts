/**
 * The whole kubelet (startMainKubelet) on the fake CRI runtime against a real API server: the
 * Node registered and Ready, its Lease, a pod bound to it going Pending → Running → Ready with the
 * kubelet's conditions, a crashing container's restart count and CrashLoopBackOff, an unknown
 * image's ErrImagePull, and a deletion that ends with the pod gone from the API server.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { isNotFound } from "../client/errors.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { realClock } from "../client/util/clock.ts";
import { waitFor } from "../testing/wait-for.ts";
import { type MainKubelet, startMainKubelet } from "./main-kubelet.ts";
import { machineInfoFromCapacity } from "./nodestatus/setters.ts";
import { FakeImageService } from "./runtime/fake-image-service.ts";
import { FakeRuntimeService } from "./runtime/fake-runtime-service.ts";

const eventually = <T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000) =>
  waitFor(what, check, timeoutMs);

const pod = (name: string, image: string, extra: Partial<Pod["spec"]> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
  spec: { nodeName: "n1", containers: [{ name: "app", image }], ...extra },
});

describe("startMainKubelet on the fake runtime", () => {
  let server: APIServer;
  let client: Clientset;
  let main: MainKubelet;
  let dir: string;
  const log: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "main-kubelet-"));
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url });
    const images = new FakeImageService();
    images.register("course/web:1.0", { sigtermExitAfterMs: 100 });
    images.register("course/crasher:1.0", { exitAfterMs: 200, exitCode: 1 });
    const runtimeService = new FakeRuntimeService(realClock, images);
    main = await startMainKubelet({
      nodeName: "n1",
      hostname: "n1",
      client,
      runtime: { name: "fake", runtimeService, imageService: images },
      rootDir: dir,
      machine: machineInfoFromCapacity("n1", { cpu: "4", memory: "8Gi", "ephemeral-storage": "100Gi" }),
      // --sync-frequency: a pod waiting in a backoff is synced (and its status written) again this often.
      syncFrequencyMs: 2000,
      nodeIP: "127.0.0.1",
      log: (line) => log.push(line),
    });
  });
  afterAll(async () => {
    await main?.stop();
    client?.closeIdleConnections();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("registers its Node, Ready, and holds its Lease in kube-node-lease", async () => {
    const node = await eventually(async () => {
      const n = await client.coreV1.nodes().get("n1");
      return n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? n : undefined;
    }, "node n1 Ready");
    expect(node.metadata.labels?.["kubernetes.io/hostname"]).toBe("n1");
    expect(node.status?.capacity?.cpu).toBe("4");
    // The Lease is made once the Node can be read (it names the Node as its owner).
    const lease = await eventually(
      () => client.coordinationV1.leases("kube-node-lease").get("n1"),
      "lease n1",
    );
    expect(lease.metadata.ownerReferences?.[0]).toMatchObject({ kind: "Node", name: "n1" });
    expect(lease.spec?.holderIdentity).toBe("n1");
    expect(lease.spec?.leaseDurationSeconds).toBe(40);
  });

  it("runs a pod bound to it: Running and Ready, with the kubelet's conditions and a container ID", async () => {
    await client.coreV1.pods("default").create(pod("web", "course/web:1.0"));
    const p = await eventually(async () => {
      const got = await client.coreV1.pods("default").get("web");
      return got.status?.phase === "Running" &&
        got.status.conditions?.some((c) => c.type === "Ready" && c.status === "True")
        ? got
        : undefined;
    }, "web Running and Ready");
    const types = (p.status?.conditions ?? []).map((c) => c.type).sort();
    expect(types).toEqual([
      "ContainersReady",
      "Initialized",
      "PodReadyToStartContainers",
      "PodScheduled",
      "Ready",
    ]);
    expect(p.status?.containerStatuses?.[0].containerID).toMatch(/^fake:\/\//);
    expect(p.status?.podIP).toMatch(/^10\./);
    expect(p.status?.hostIP).toBe("127.0.0.1");
    expect(p.status?.startTime).toBeDefined();
  });

  it("a container that keeps exiting 1 is restarted, and then waits in CrashLoopBackOff", async () => {
    await client.coreV1.pods("default").create(pod("crash", "course/crasher:1.0"));
    const p = await eventually(async () => {
      const got = await client.coreV1.pods("default").get("crash");
      const cs = got.status?.containerStatuses?.[0];
      return cs?.state?.waiting?.reason === "CrashLoopBackOff" ? got : undefined;
    }, "crash in CrashLoopBackOff");
    const cs = p.status?.containerStatuses?.[0];
    expect(cs?.restartCount).toBeGreaterThanOrEqual(1);
    expect(cs?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: "Error" });
    expect(cs?.state?.waiting?.message).toMatch(
      /^back-off 10s restarting failed container=app pod=crash_default\(/,
    );
  });

  it("an image no registry has: ErrImagePull, then ImagePullBackOff", async () => {
    await client.coreV1.pods("default").create(pod("nope", "course/does-not-exist:1.0"));
    const reasons = new Set<string>();
    await eventually(async () => {
      const got = await client.coreV1.pods("default").get("nope");
      const r = got.status?.containerStatuses?.[0]?.state?.waiting?.reason;
      if (r) reasons.add(r);
      return reasons.has("ImagePullBackOff") ? true : undefined;
    }, "nope in ImagePullBackOff");
    expect(reasons.has("ErrImagePull") || reasons.has("ImagePullBackOff")).toBe(true);
  });

  it("a deleted pod is stopped and then removed from the API server by the kubelet's final delete", async () => {
    await client.coreV1.pods("default").delete("web");
    await eventually(async () => {
      try {
        await client.coreV1.pods("default").get("web");
        return undefined;
      } catch (err) {
        return isNotFound(err) ? true : undefined;
      }
    }, "web gone");
  });
});
