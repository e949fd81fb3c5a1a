/**
 * The kubelet's loops against a real API server over HTTP, with an in-memory runtime: the
 * node-filtered watch (the real request URL), status written through pods/status only on change,
 * graceful deletion ending in the final DELETE, orphans killed, static pods with mirror pods, and
 * another node's pods never seen.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { isNotFound } from "../client/errors.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { FaultProxy } from "../client/testing/fault-proxy.ts";
import { FakeRuntime } from "./container/testing/fake-runtime.ts";
import { testGenerateAPIPodStatus } from "./container/testing/generate-status.ts";
import { Kubelet } from "./kubelet.ts";

async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await Promise.resolve()
      .then(check)
      .catch(() => undefined);
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const newPod = (name: string, nodeName: string, extra: Partial<Pod["spec"]> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "default" },
  spec: { nodeName, containers: [{ name: "c", image: "course/sleeper" }], ...extra },
});

describe("Kubelet against a real API server", () => {
  let server: APIServer;
  let client: Clientset;
  /** The kubelet talks to the API server through this proxy, which records every request as it arrives. */
  let proxy: FaultProxy;
  let kubeletClient: Clientset;
  let kubelet: Kubelet;
  let runtime: FakeRuntime;
  let dir: string;
  const log: string[] = [];
  const errors: unknown[] = [];
  /** The kubelet's status patches of a pod, counted as they reach the proxy (before the server answers). */
  const statusPatches = (name: string) =>
    proxy.log.filter(
      (r) => r.method === "PATCH" && r.url.startsWith(`/api/v1/namespaces/default/pods/${name}/status`),
    ).length;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, log: (l) => log.push(l) });
    client = newForConfig({ host: server.url });
    proxy = await FaultProxy.start(server.url);
    kubeletClient = newForConfig({ host: proxy.url });
    await client.coreV1.nodes().create({ apiVersion: "v1", kind: "Node", metadata: { name: "n1" } });
    dir = await mkdtemp(join(tmpdir(), "kubelet-loop-"));
    await writeFile(
      join(dir, "static.yaml"),
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: static-web\nspec:\n  containers:\n  - name: web\n    image: course/web\n",
    );
    runtime = new FakeRuntime();
    kubelet = new Kubelet({
      nodeName: "n1",
      clientset: kubeletClient,
      runtime,
      rootDir: dir,
      podManifestPath: dir,
      generateAPIPodStatus: testGenerateAPIPodStatus,
      // Resync every pod often, so "only write on change" is put to the test many times.
      syncFrequencyMs: 200,
      onError: (e) => errors.push(e),
    });
    kubelet.run();
  });
  afterAll(async () => {
    await kubelet?.stop();
    kubeletClient?.closeIdleConnections();
    await proxy?.close();
    client?.closeIdleConnections();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("lists and watches only its own node's pods: the request carries fieldSelector=spec.nodeName=n1", async () => {
    await client.coreV1.pods("default").create(newPod("elsewhere", "n2"));
    const mine = await client.coreV1.pods("default").create(newPod("p1", "n1"));
    await eventually(() => kubelet.podManager.getPodByUID(mine.metadata.uid!), "p1 in the kubelet");
    // Every pod list and watch the kubelet sent, as the proxy saw it arrive (a watch is still open).
    const podURLs = () =>
      proxy.log.filter((r) => r.method === "GET" && r.url.startsWith("/api/v1/pods?")).map((r) => r.url);
    await eventually(() => podURLs().some((url) => /watch=true/.test(url)), "the watch");
    const podRequests = proxy.log
      .filter((r) => r.method === "GET" && r.url.startsWith("/api/v1/pods?"))
      .map((r) => r.url);
    expect(podRequests.length).toBeGreaterThanOrEqual(2);
    for (const url of podRequests) expect(url).toMatch(/fieldSelector=spec\.nodeName%3Dn1/);
    expect(podRequests[0]).not.toMatch(/watch=true/); // the list first,
    expect(podRequests.some((url) => /watch=true/.test(url))).toBe(true); // then the watch
    console.log(`the kubelet's pod requests:\n${podRequests.join("\n")}`);
    expect(kubelet.getPods().map((p) => p.metadata.name)).not.toContain("elsewhere");
  });

  it("reports the pod Running and Ready through pods/status, and patches only when something changed", async () => {
    const running = await eventually(async () => {
      const p = await client.coreV1.pods("default").get("p1");
      const ready = p.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      return p.status?.phase === "Running" && ready ? p : undefined;
    }, "p1 Running and Ready");
    expect(running.status?.podIP).toBe("10.0.0.1");
    expect(running.status?.containerStatuses?.[0]).toMatchObject({ name: "c", ready: true, started: true });
    // Ready went False → True: the patch cleared the old reason and message, field by field.
    const ready = running.status?.conditions?.find((c) => c.type === "Ready");
    expect(ready?.reason).toBeUndefined();
    expect(ready?.message).toBeUndefined();
    // The scheduler-style condition is the kubelet's too; its transition time is set once.
    const patches = statusPatches("p1");
    expect(patches).toBeGreaterThanOrEqual(1);

    // Many resyncs (every ~200 ms) and relists later, nothing changed: no new PATCH.
    const syncsBefore = runtime.calls.filter((c) => c === "syncPod default/p1").length;
    await eventually(
      () => runtime.calls.filter((c) => c === "syncPod default/p1").length >= syncsBefore + 3,
      "three more syncs",
    );
    expect(statusPatches("p1")).toBe(patches);
    // The 10 s batch compares the server's copy of p1 with the kubelet's (needsReconcile): they
    // agree (the batch may still write the static pod's mirror, started at the same time).
    await kubelet.statusManager.syncBatch(true);
    expect(statusPatches("p1")).toBe(patches);

    // The container crashes and is restarted: the status changes, so a PATCH follows.
    runtime.exitContainer(running.metadata.uid!, "c", 1);
    const restarted = await eventually(async () => {
      const p = await client.coreV1.pods("default").get("p1");
      return p.status?.containerStatuses?.[0].restartCount === 1 ? p : undefined;
    }, "restartCount 1");
    expect(restarted.status?.phase).toBe("Running");
    expect(statusPatches("p1")).toBeGreaterThan(patches);
    expect(runtime.calls).not.toContain("syncPod default/elsewhere");
  });

  it("a deletion terminates the pod with its grace period and ends with the final DELETE", async () => {
    const p1 = await client.coreV1.pods("default").get("p1");
    await client.coreV1.pods("default").delete("p1", { gracePeriodSeconds: 20 });
    await eventually(async () => {
      try {
        await client.coreV1.pods("default").get("p1");
        return undefined;
      } catch (e) {
        return isNotFound(e) ? true : undefined;
      }
    }, "p1 removed from the API server");
    expect(runtime.killed.get(p1.metadata.uid!)).toBe(20);
    expect(runtime.runningContainers(p1.metadata.uid!)).toEqual([]);
    // The user's DELETE (grace 20), then the kubelet's (grace 0, UID precondition).
    const deletes = () =>
      log.filter((l) => l.includes('verb="DELETE"') && l.includes("/namespaces/default/pods/p1")).length;
    // (A request is logged when its answer is sent, a moment after the pod left the store.)
    await eventually(() => deletes() >= 2, "two DELETE requests logged");
    await new Promise((r) => setTimeout(r, 200));
    expect(deletes()).toBe(2);
    expect(kubelet.statusManager.counts.delete).toBeGreaterThanOrEqual(1);
    await eventually(() => !kubelet.podWorkers.podSyncStatuses.has(p1.metadata.uid!), "the worker forgotten");
  });

  it("kills containers of a pod it does not know (deleted while the kubelet was down)", async () => {
    runtime.addRunningPod("ghost-uid", "default", "ghost", "c");
    await eventually(() => runtime.runningContainers("ghost-uid").length === 0, "the orphan killed");
    expect(runtime.calls).toContain("killPod default/ghost");
    expect(runtime.killed.get("ghost-uid")).toBe(1);
  });

  it("runs a static pod from --pod-manifest-path and shows it as a mirror pod", async () => {
    const mirror = await eventually(async () => {
      const p = await client.coreV1.pods("default").get("static-web-n1");
      return p.status?.phase === "Running" ? p : undefined;
    }, "the mirror pod Running");
    const staticPod = kubelet.getPods().find((p) => p.metadata.name === "static-web-n1")!;
    expect(mirror.metadata.annotations?.["kubernetes.io/config.mirror"]).toBe(staticPod.metadata.uid);
    expect(mirror.metadata.uid).not.toBe(staticPod.metadata.uid);
    expect(mirror.metadata.ownerReferences?.[0]).toMatchObject({ kind: "Node", name: "n1" });
    expect(runtime.runningContainers(staticPod.metadata.uid!)).toEqual(["web"]);
    expect(kubelet.getPods().some((p) => p.metadata.uid === mirror.metadata.uid)).toBe(false); // never run
    expect(errors).toEqual([]);
  });
});
