/**
 * The EndpointSlice controller inside the controller-manager, against our API server over HTTP,
 * read by the real kubectl 1.32: `kubectl describe service` lists the ready pods' IPs under
 * `Endpoints:` (it reads the slices labelled `kubernetes.io/service-name`), and `kubectl get
 * endpointslices` shows the slice with upstream's columns; a pod turning unready leaves the
 * description and stays in the slice as not ready.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import type { Node, Pod } from "../../api/core.ts";
import type { EndpointSlice } from "../../api/discovery.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { plainKubectlEnv, runKubectl } from "../../apiserver/testing/kubectl-env.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { type RunningControllerManager, startControllerManager } from "../controller-manager.ts";
import { endpointSlices } from "./endpointslice-controller.ts";

describeWithTools("the EndpointSlice controller, read by the real kubectl", ["kubectl"], () => {
  let dir: string;
  let server: APIServer;
  let client: Clientset;
  let manager: RunningControllerManager;
  let env: NodeJS.ProcessEnv;
  const logs: string[] = [];
  const ns = "default";
  const ok = async (...args: string[]) => {
    const r = await runKubectl(env, args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.err}`);
    return r.out;
  };

  const createPod = (name: string) =>
    client.coreV1.pods(ns).create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels: { app: "web" } },
      spec: {
        nodeName: "n1",
        containers: [{ name: "c", image: "web", ports: [{ name: "http", containerPort: 8080 }] }],
      },
    } as Pod);
  /** What a kubelet writes: Running, an IP, Ready as asked. */
  const setStatus = async (name: string, ip: string, ready: boolean) => {
    const pod = await client.coreV1.pods(ns).get(name);
    pod.status = {
      ...pod.status,
      phase: "Running",
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
    };
    await client.coreV1.pods(ns).updateStatus(pod);
  };
  /** The `Endpoints:` line of `kubectl describe service web`, once `pred` holds. */
  const describedEndpoints = (pred: (value: string) => boolean) =>
    waitFor("describe service web", async () => {
      const out = await ok("describe", "service", "web");
      const value = /^Endpoints:[ \t]*(.*)$/m.exec(out)?.[1]?.trim() ?? "";
      return pred(value) ? value : undefined;
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "epsctl-test-"));
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
    manager = await startControllerManager({
      client,
      controllers: ["endpointslice-controller"],
      log: (l) => logs.push(l),
    });
    expect(manager.started).toEqual(["endpointslice-controller"]);
    expect(await manager.synced).toBe(true);
    env = await plainKubectlEnv(dir, server.url);
  });
  afterAll(async () => {
    // A sync that found the cache behind its own writes is retried, as upstream: not a failure.
    if (logs.some((l) => l.startsWith("error") && !l.includes("out of date"))) console.log(logs.join("\n"));
    await manager?.stop();
    client?.closeIdleConnections();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("shows the ready pods' IPs under Endpoints in describe service, and the slice in get endpointslices", async () => {
    await client.coreV1.nodes().create({ apiVersion: "v1", kind: "Node", metadata: { name: "n1" } } as Node);
    await client.coreV1.services(ns).create({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: {
        selector: { app: "web" },
        clusterIP: "10.96.0.10",
        ports: [{ name: "http", port: 80, targetPort: "http" }],
      },
    });
    // Before any pod has an IP: the empty placeholder slice. kubectl prints `<none>` only when
    // there is no slice at all; for slices without ready endpoints it prints nothing.
    expect(await describedEndpoints((v) => v === "")).toBe("");
    await createPod("web-a");
    await createPod("web-b");
    await setStatus("web-a", "10.244.1.10", true);
    await setStatus("web-b", "10.244.1.11", true);
    const both = await describedEndpoints((v) => v.split(",").length === 2);
    expect(both.split(",").sort()).toEqual(["10.244.1.10:8080", "10.244.1.11:8080"]);

    const table = await ok("get", "endpointslices", "-l", "kubernetes.io/service-name=web");
    const rows = table
      .trim()
      .split("\n")
      .map((l) => l.split(/\s{2,}/));
    expect(rows[0]).toEqual(["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]);
    expect(rows).toHaveLength(2); // one slice: the placeholder was reused
    expect(rows[1]?.[0]).toMatch(/^web-[a-z0-9]{5}$/);
    expect(rows[1]?.slice(1, 3)).toEqual(["IPv4", "8080"]);
    expect(rows[1]?.[3]?.split(",").sort()).toEqual(["10.244.1.10", "10.244.1.11"]);

    // web-b fails its readiness probe: gone from describe, still in the slice as not ready.
    await setStatus("web-b", "10.244.1.11", false);
    expect(await describedEndpoints((v) => v === "10.244.1.10:8080")).toBe("10.244.1.10:8080");
    const [slice] = (await client.resource<EndpointSlice>(endpointSlices, ns).list()).items;
    expect(slice?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "Service",
      name: "web",
      controller: true,
    });
    expect(slice?.endpoints.find((e) => e.targetRef?.name === "web-b")?.conditions).toEqual({
      ready: false,
      serving: false,
      terminating: false,
    });
  });
});
