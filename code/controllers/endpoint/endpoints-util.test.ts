/**
 * The Endpoints controller's pure parts: repacking subsets, truncation at 1000 addresses, named
 * target ports, which pods get an address, which Services a pod update wakes, and the trigger
 * time exported in the annotation.
 */
import { describe, expect, it } from "vitest";
import type { EndpointAddress, Endpoints, Pod, Service } from "../../api/core.ts";
import { truncateEndpoints } from "./endpoints-controller.ts";
import {
  findPort,
  getServicesToUpdateOnPodChange,
  podToEndpointAddressForService,
  shouldPodBeInEndpoints,
} from "./endpoints-util.ts";
import { repackSubsets } from "./repack-subsets.ts";
import { TriggerTimeTracker } from "./trigger-time-tracker.ts";

const addr = (ip: string, uid = ip): EndpointAddress => ({ ip, targetRef: { kind: "Pod", uid } });

function pod(
  name: string,
  extra: { ready?: boolean; ip?: string; rv?: string; labels?: Record<string, string> } = {},
): Pod {
  const ip = extra.ip ?? "10.1.0.1";
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "ns",
      uid: `uid-${name}`,
      resourceVersion: extra.rv ?? "1",
      labels: extra.labels ?? { app: "web" },
    },
    spec: {
      nodeName: "n1",
      containers: [
        {
          name: "c",
          ports: [
            { name: "http", containerPort: 8080 },
            { name: "dns", containerPort: 53, protocol: "UDP" },
          ],
        },
      ],
    },
    status: {
      phase: "Running",
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [
        {
          type: "Ready",
          status: extra.ready === false ? "False" : "True",
          lastTransitionTime: "2026-01-01T00:00:05Z",
        },
      ],
    },
  };
}

const service = (name: string, selector?: Record<string, string>): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: "ns", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: {
    selector,
    clusterIP: "10.96.0.10",
    ipFamilies: ["IPv4"],
    ports: [{ port: 80, targetPort: "http" }],
  },
});

describe("repackSubsets", () => {
  it("groups the ports that the same addresses offer, and sorts", () => {
    const out = repackSubsets([
      { addresses: [addr("10.0.0.2")], ports: [{ port: 80 }] },
      { addresses: [addr("10.0.0.1")], ports: [{ port: 80 }] },
      { addresses: [addr("10.0.0.2")], ports: [{ port: 443 }] },
      { addresses: [addr("10.0.0.1")], ports: [{ port: 443 }] },
    ]);
    expect(out).toEqual([
      { addresses: [addr("10.0.0.1"), addr("10.0.0.2")], ports: [{ port: 443 }, { port: 80 }] },
    ]);
  });

  it("keeps ready and not-ready apart, and not ready wins for the same address and port", () => {
    const out = repackSubsets([
      { addresses: [addr("10.0.0.1")], ports: [{ port: 80 }] },
      { notReadyAddresses: [addr("10.0.0.1")], ports: [{ port: 80 }] },
      { addresses: [addr("10.0.0.2")], ports: [{ port: 80 }] },
    ]);
    expect(out).toEqual([
      { addresses: [addr("10.0.0.2")], notReadyAddresses: [addr("10.0.0.1")], ports: [{ port: 80 }] },
    ]);
  });

  it("keeps a subset without ports, and two pods with one IP as two addresses", () => {
    const out = repackSubsets([
      { addresses: [addr("10.0.0.1", "a")] },
      { addresses: [addr("10.0.0.1", "b")] },
    ]);
    expect(out).toEqual([{ addresses: [addr("10.0.0.1", "a"), addr("10.0.0.1", "b")] }]);
  });

  it("gives the same result whatever the input order", () => {
    const subsets = ["10.0.0.3", "10.0.0.1", "10.0.0.2"].flatMap((ip, i) => [
      { addresses: [addr(ip)], ports: [{ port: 80, name: "a" }] },
      { notReadyAddresses: [addr(`10.0.1.${i}`)], ports: [{ port: 81, name: "b" }] },
    ]);
    expect(repackSubsets([...subsets].reverse())).toEqual(repackSubsets(subsets));
  });
});

describe("truncateEndpoints", () => {
  const many = (n: number, base: string) =>
    Array.from({ length: n }, (_, i) => addr(`${base}.${Math.floor(i / 250)}.${i % 250}`));
  it("drops not-ready addresses first, in proportion per subset", () => {
    const ep: Endpoints = {
      metadata: { name: "s" },
      subsets: [
        { addresses: many(600, "10.0"), notReadyAddresses: many(300, "10.1") },
        { notReadyAddresses: many(300, "10.2") },
      ],
    };
    expect(truncateEndpoints(ep)).toBe(true);
    expect(ep.subsets?.[0].addresses).toHaveLength(600);
    // 400 not-ready may stay, shared 300:300 → 200 each.
    expect(ep.subsets?.[0].notReadyAddresses).toHaveLength(200);
    expect(ep.subsets?.[1].notReadyAddresses).toHaveLength(200);
  });
  it("cuts ready ones too when they alone exceed 1000, dropping every not-ready one", () => {
    const ep: Endpoints = {
      metadata: { name: "s" },
      subsets: [
        { addresses: many(900, "10.0"), notReadyAddresses: many(10, "10.1") },
        { addresses: many(300, "10.2") },
      ],
    };
    expect(truncateEndpoints(ep)).toBe(true);
    const total = (ep.subsets ?? []).reduce(
      (n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0),
      0,
    );
    expect(total).toBe(1000);
    expect(ep.subsets?.[0].addresses).toHaveLength(750);
    expect(ep.subsets?.[0].notReadyAddresses).toHaveLength(0);
  });
  it("leaves an object within capacity alone", () => {
    const ep: Endpoints = { metadata: { name: "s" }, subsets: [{ addresses: many(1000, "10.0") }] };
    expect(truncateEndpoints(ep)).toBe(false);
  });
});

describe("which pods, which port", () => {
  it("resolves a named targetPort per pod, with the protocol, and a number as it is", () => {
    const p = pod("a");
    expect(findPort(p, { port: 80, targetPort: "http" })).toBe(8080);
    expect(findPort(p, { port: 53, targetPort: "dns", protocol: "UDP" })).toBe(53);
    expect(findPort(p, { port: 53, targetPort: "dns" })).toBeUndefined(); // TCP asked, UDP offered
    expect(findPort(p, { port: 80, targetPort: 9000 })).toBe(9000);
    expect(findPort(p, { port: 80 })).toBe(80);
  });

  it("leaves out terminal pods, pods without an IP, and terminating ones unless published", () => {
    expect(shouldPodBeInEndpoints(pod("a"), false)).toBe(true);
    const done = pod("b");
    done.status = { ...done.status, phase: "Succeeded" };
    expect(shouldPodBeInEndpoints(done, true)).toBe(false);
    const noIP = pod("c");
    noIP.status = { phase: "Pending" };
    expect(shouldPodBeInEndpoints(noIP, true)).toBe(false);
    const terminating = pod("d");
    terminating.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    expect(shouldPodBeInEndpoints(terminating, false)).toBe(false);
    expect(shouldPodBeInEndpoints(terminating, true)).toBe(true);
  });

  it("takes the pod's IP of the Service's family", () => {
    const p = pod("a");
    p.status = { ...p.status, podIPs: [{ ip: "10.1.0.1" }, { ip: "fd00::1" }] };
    expect(podToEndpointAddressForService(service("s", { app: "web" }), p)).toMatchObject({
      ip: "10.1.0.1",
      nodeName: "n1",
      targetRef: { kind: "Pod", name: "a", namespace: "ns", uid: "uid-a" },
    });
    const v6 = service("s6", { app: "web" });
    v6.spec = { ...v6.spec, ipFamilies: ["IPv6"] };
    expect(podToEndpointAddressForService(v6, p)?.ip).toBe("fd00::1");
  });
});

describe("getServicesToUpdateOnPodChange", () => {
  const svcs = [service("web", { app: "web" }), service("api", { app: "api" }), service("manual")];
  it("wakes nothing for a resync or a change endpoints do not show", () => {
    expect(getServicesToUpdateOnPodChange(svcs, pod("a"), pod("a")).size).toBe(0);
    const annotated = pod("a", { rv: "2" });
    annotated.metadata.annotations = { note: "x" };
    expect(getServicesToUpdateOnPodChange(svcs, pod("a"), annotated).size).toBe(0);
  });
  it("wakes the pod's Services on a readiness change, and only the joined/left ones on a relabel", () => {
    expect([...getServicesToUpdateOnPodChange(svcs, pod("a"), pod("a", { rv: "2", ready: false }))]).toEqual([
      "ns/web",
    ]);
    const relabelled = pod("a", { rv: "2", labels: { app: "api" } });
    expect([...getServicesToUpdateOnPodChange(svcs, pod("a"), relabelled)].sort()).toEqual([
      "ns/api",
      "ns/web",
    ]);
  });
});

describe("TriggerTimeTracker", () => {
  it("exports the Service's creation first, then the earliest Ready transition that moved", () => {
    const t = new TriggerTimeTracker();
    const svc = service("web", { app: "web" });
    const a = pod("a");
    expect(t.computeEndpointLastChangeTriggerTime("ns", svc, [a])).toBe(Date.parse("2026-01-01T00:00:00Z"));
    // Nothing moved: no trigger time (the annotation is removed).
    expect(t.computeEndpointLastChangeTriggerTime("ns", svc, [a])).toBeUndefined();
    const b = pod("b");
    const flipped = pod("a", { ready: false });
    flipped.status?.conditions?.splice(0, 1, {
      type: "Ready",
      status: "False",
      lastTransitionTime: "2026-01-01T00:01:00Z",
    });
    expect(t.computeEndpointLastChangeTriggerTime("ns", svc, [flipped, b])).toBe(
      Date.parse("2026-01-01T00:00:05Z"),
    );
    t.deleteService("ns", "web");
    expect(t.computeEndpointLastChangeTriggerTime("ns", svc, [flipped, b])).toBe(
      Date.parse("2026-01-01T00:00:00Z"),
    );
  });
});
