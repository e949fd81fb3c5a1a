/**
 * The Endpoints controller inside the controller-manager, against our API server over HTTP:
 * a Service's Endpoints follow its pods becoming ready and unready, changing IP and being
 * deleted; a named targetPort resolves per pod; a pod update that changes nothing visible
 * writes nothing; a Service without a selector is left alone; a headless Service's Endpoints
 * carry the headless label; a deleted Service takes its Endpoints with it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Endpoints, Pod, Service } from "../../api/core.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { isNotFound } from "../../client/errors.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { type RunningControllerManager, startControllerManager } from "../controller-manager.ts";
import { EndpointsLastChangeTriggerTime, endpoints, IsHeadlessService } from "./endpoints-controller.ts";

describe("the Endpoints controller", () => {
  let server: APIServer;
  let manager: RunningControllerManager;
  let client: Clientset;
  const ns = "default";
  /** Every request line the API server logged: the test counts the controller's writes. */
  const requests: string[] = [];
  const logs: string[] = [];
  const eps = () => client.resource<Endpoints>(endpoints, ns);
  const endpointWrites = (name: string) =>
    requests.filter(
      (l) =>
        /verb="(UPDATE|CREATE)"/.test(l) && l.includes(`/namespaces/${ns}/endpoints`) && l.includes(name),
    ).length;

  const createPod = (name: string, labels: Record<string, string>, port = 8080) =>
    client.coreV1.pods(ns).create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels },
      spec: {
        nodeName: "n1",
        containers: [{ name: "c", image: "web", ports: [{ name: "http", containerPort: port }] }],
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
      conditions: [
        {
          type: "Ready",
          status: ready ? "True" : "False",
          lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
        },
      ],
    };
    await client.coreV1.pods(ns).updateStatus(pod);
  };
  const createService = (name: string, spec: Service["spec"]) =>
    client.coreV1
      .services(ns)
      .create({ apiVersion: "v1", kind: "Service", metadata: { name, labels: { tier: "front" } }, spec });
  /** [ready ip:port…] and [not-ready ip:port…] of the Endpoints, once `pred` holds. */
  const addressesWhen = (name: string, pred: (ready: string[], notReady: string[]) => boolean) =>
    waitFor(`endpoints ${name}`, async () => {
      const ep = await eps().get(name);
      const ready: string[] = [];
      const notReady: string[] = [];
      for (const s of ep.subsets ?? []) {
        const ports = (s.ports ?? []).map((p) => p.port);
        for (const a of s.addresses ?? [])
          for (const p of ports.length ? ports : [0]) ready.push(`${a.ip}:${p}`);
        for (const a of s.notReadyAddresses ?? [])
          for (const p of ports.length ? ports : [0]) notReady.push(`${a.ip}:${p}`);
      }
      ready.sort();
      notReady.sort();
      return pred(ready, notReady) ? { ep, ready, notReady } : undefined;
    });

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, log: (l) => requests.push(l) });
    client = newForConfig({ host: server.url, qps: -1 });
    manager = await startControllerManager({
      client,
      controllers: ["endpoints-controller"],
      log: (l) => logs.push(l),
    });
    expect(manager.started).toEqual(["endpoints-controller"]);
    expect(await manager.synced).toBe(true);
  });

  afterAll(async () => {
    if (logs.some((l) => l.startsWith("error"))) console.log(logs.join("\n"));
    await manager?.stop();
    client?.closeIdleConnections();
    await server?.close();
  });

  it("lists ready pods in addresses and unready ones in notReadyAddresses, following readiness", async () => {
    await createService("web", {
      selector: { app: "web" },
      // Our API server allocates no cluster IPs: give one, or the Service counts as headless.
      clusterIP: "10.96.0.10",
      ports: [{ name: "http", port: 80, targetPort: "http" }],
    });
    await createPod("web-a", { app: "web" }, 8080);
    await createPod("web-b", { app: "web" }, 9090); // same port name, another number
    await createPod("other", { app: "other" });
    // No IP yet: no address at all, but the object exists.
    const empty = await addressesWhen("web", (r, n) => r.length === 0 && n.length === 0);
    expect(empty.ep.metadata.labels).toEqual({ tier: "front" });
    expect(empty.ep.metadata.annotations?.[EndpointsLastChangeTriggerTime]).toMatch(/^\d{4}-\d\d-\d\dT/);
    await setStatus("web-a", "10.244.1.10", true);
    await setStatus("web-b", "10.244.1.11", false);
    await setStatus("other", "10.244.1.12", true);
    const both = await addressesWhen("web", (r, n) => r.length === 1 && n.length === 1);
    expect(both.ready).toEqual(["10.244.1.10:8080"]);
    expect(both.notReady).toEqual(["10.244.1.11:9090"]);
    const addr = both.ep.subsets?.flatMap((s) => s.addresses ?? [])[0];
    expect(addr).toMatchObject({
      ip: "10.244.1.10",
      nodeName: "n1",
      targetRef: { kind: "Pod", name: "web-a", namespace: ns },
    });
    expect(both.ep.subsets?.[0].ports?.[0]).toMatchObject({ name: "http", protocol: "TCP" });

    // web-b turns ready, web-a fails its readiness probe.
    await setStatus("web-b", "10.244.1.11", true);
    await setStatus("web-a", "10.244.1.10", false);
    const swapped = await addressesWhen("web", (r) => r.join() === "10.244.1.11:9090");
    expect(swapped.notReady).toEqual(["10.244.1.10:8080"]);

    // Deleted (no grace period here: the pod's terminationGracePeriodSeconds is 0 in this test's API defaults or it
    // becomes terminating): either way it leaves the Endpoints.
    await client.coreV1.pods(ns).delete("web-a", { gracePeriodSeconds: 0 });
    await addressesWhen("web", (r, n) => r.join() === "10.244.1.11:9090" && n.length === 0);
  });

  it("writes nothing for a pod change the Endpoints do not show", async () => {
    await addressesWhen("web", (r, n) => r.length === 1 && n.length === 0);
    const before = endpointWrites("/endpoints/web");
    const pod = await client.coreV1.pods(ns).get("web-b");
    pod.metadata.annotations = { "example.com/note": "irrelevant" };
    await client.coreV1.pods(ns).update(pod);
    // Then a change that matters, so that we know the controller has caught up.
    await setStatus("web-b", "10.244.1.11", false);
    await addressesWhen("web", (r, n) => r.length === 0 && n.length === 1);
    expect(endpointWrites("/endpoints/web") - before).toBe(1);
  });

  it("leaves a Service without a selector alone, labels a headless one, deletes Endpoints with their Service", async () => {
    await createService("manual", { ports: [{ port: 80 }] });
    const mine: Endpoints = {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name: "manual" },
      subsets: [{ addresses: [{ ip: "192.0.2.1" }], ports: [{ port: 80 }] }],
    };
    await eps().create(mine);
    await createService("db", { selector: { app: "web" }, clusterIP: "None" });
    const headless = await addressesWhen("db", (_r, n) => n.length === 1);
    expect(headless.notReady).toEqual(["10.244.1.11:0"]);
    expect(headless.ep.metadata.labels?.[IsHeadlessService]).toBe("");
    // Untouched: still the address written by hand.
    expect((await eps().get("manual")).subsets?.[0].addresses?.[0].ip).toBe("192.0.2.1");

    await client.coreV1.services(ns).delete("db");
    await waitFor("db's Endpoints to go", async () => {
      try {
        await eps().get("db");
        return false;
      } catch (e) {
        return isNotFound(e);
      }
    });
  });
});
