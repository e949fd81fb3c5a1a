/**
 * The EndpointSlice reconciler's decisions, as a pure function: one endpoint per pod with an IP
 * (conditions as upstream sets them), ports from the Service's targetPorts resolved per pod, at
 * most maxEndpointsPerSlice a slice, nothing written when nothing changed, an empty placeholder
 * for a Service without endpoints, and a slice reused rather than deleted and created.
 */
import { describe, expect, it } from "vitest";
import type { Node, Pod, Service } from "../../api/core.ts";
import type { EndpointSlice } from "../../api/discovery.ts";
import { controllerName, reconcile } from "./reconciler.ts";

const service = (over: Partial<Service["spec"]> = {}): Service => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: "default", uid: "svc-uid", labels: { tier: "front" } },
  spec: {
    selector: { app: "web" },
    clusterIP: "10.96.0.10",
    ports: [{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }],
    ...over,
  },
});

const pod = (
  i: number,
  opts: { ready?: boolean; port?: number; terminating?: boolean; ip?: string } = {},
): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: `web-${i}`,
    namespace: "default",
    uid: `uid-${i}`,
    labels: { app: "web" },
    ...(opts.terminating ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
  },
  spec: {
    nodeName: "n1",
    containers: [{ name: "c", image: "web", ports: [{ name: "http", containerPort: opts.port ?? 8080 }] }],
  },
  status: {
    phase: "Running",
    ...(opts.ip === "" ? {} : { podIP: opts.ip ?? `10.244.${Math.floor(i / 250)}.${(i % 250) + 1}` }),
    ...(opts.ip === ""
      ? {}
      : { podIPs: [{ ip: opts.ip ?? `10.244.${Math.floor(i / 250)}.${(i % 250) + 1}` }] }),
    conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
  },
});

const node: Node = {
  apiVersion: "v1",
  kind: "Node",
  metadata: { name: "n1", labels: { "topology.kubernetes.io/zone": "z1" } },
};
const nodeByName = (n: string) => (n === "n1" ? node : undefined);

/** What the API server would hand back: a name, a uid, a generation. */
let created = 0;
const stored = (s: EndpointSlice): EndpointSlice => {
  created++;
  return {
    ...structuredClone(s),
    metadata: {
      ...s.metadata,
      name: s.metadata.name ?? `${s.metadata.generateName}${created}`,
      uid: `slice-${created}`,
      resourceVersion: String(created),
      generation: 1,
    },
  };
};
/** Applies a plan to a set of slices, as the controller's writes would. */
const apply = (slices: EndpointSlice[], plan: ReturnType<typeof reconcile>): EndpointSlice[] => {
  const gone = new Set(plan.delete.map((s) => s.metadata.name));
  const updated = new Map(plan.update.map((s) => [s.metadata.name, s]));
  return [
    ...slices.filter((s) => !gone.has(s.metadata.name)).map((s) => updated.get(s.metadata.name) ?? s),
    ...plan.create.map(stored),
  ];
};

describe("reconcile", () => {
  it("creates one slice of endpoints for the pods with an IP, with upstream's labels, owner and conditions", () => {
    const plan = reconcile({
      service: service(),
      pods: [pod(1), pod(2, { ready: false }), pod(3, { terminating: true }), pod(4, { ip: "" })],
      existingSlices: [],
      nodeByName,
    });
    expect(plan.update).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.create).toHaveLength(1);
    const slice = plan.create[0] as EndpointSlice;
    expect(slice.metadata.generateName).toBe("web-");
    expect(slice.metadata.labels).toEqual({
      tier: "front",
      "kubernetes.io/service-name": "web",
      "endpointslice.kubernetes.io/managed-by": controllerName,
    });
    expect(slice.metadata.ownerReferences).toEqual([
      {
        apiVersion: "v1",
        kind: "Service",
        name: "web",
        uid: "svc-uid",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(slice.addressType).toBe("IPv4");
    expect(slice.ports).toEqual([{ name: "http", port: 8080, protocol: "TCP" }]);
    // Not-ready pods are listed (serving false); a terminating one too, serving but not ready.
    expect(slice.endpoints.map((e) => [e.addresses[0], e.conditions])).toEqual([
      ["10.244.0.2", { ready: true, serving: true, terminating: false }],
      ["10.244.0.3", { ready: false, serving: false, terminating: false }],
      ["10.244.0.4", { ready: false, serving: true, terminating: true }],
    ]);
    expect(slice.endpoints[0]).toMatchObject({
      nodeName: "n1",
      zone: "z1",
      targetRef: { kind: "Pod", namespace: "default", name: "web-1", uid: "uid-1" },
    });
  });

  it("calls a terminating pod ready when the Service publishes not-ready addresses", () => {
    const plan = reconcile({
      service: service({ publishNotReadyAddresses: true }),
      pods: [pod(3, { terminating: true })],
      existingSlices: [],
      nodeByName,
    });
    expect(plan.create[0]?.endpoints[0]?.conditions).toEqual({
      ready: true,
      serving: true,
      terminating: true,
    });
  });

  it("puts pods whose named port resolves to different numbers into different slices", () => {
    const plan = reconcile({
      service: service(),
      pods: [pod(1, { port: 8080 }), pod(2, { port: 9090 })],
      existingSlices: [],
      nodeByName,
    });
    expect(plan.create.map((s) => [s.ports?.[0]?.port, s.endpoints.map((e) => e.addresses[0])])).toEqual([
      [8080, ["10.244.0.2"]],
      [9090, ["10.244.0.3"]],
    ]);
  });

  it("cuts 250 endpoints into slices of 100, 100 and 50, and then writes nothing when nothing changed", () => {
    const pods = Array.from({ length: 250 }, (_, i) => pod(i));
    const first = reconcile({ service: service(), pods, existingSlices: [], nodeByName });
    expect(first.create.map((s) => s.endpoints.length)).toEqual([100, 100, 50]);
    const slices = apply([], first);
    const again = reconcile({ service: service(), pods, existingSlices: slices, nodeByName });
    expect(again).toEqual({ create: [], update: [], delete: [], errors: [] });
  });

  it("rewrites only the slice of the pod that changed, and fills new pods into it", () => {
    const pods = Array.from({ length: 150 }, (_, i) => pod(i));
    const slices = apply([], reconcile({ service: service(), pods, existingSlices: [], nodeByName }));
    const changed = [...pods];
    changed[120] = pod(120, { ready: false });
    changed.push(pod(150));
    const plan = reconcile({ service: service(), pods: changed, existingSlices: slices, nodeByName });
    expect(plan.create).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.update).toHaveLength(1);
    const slice = plan.update[0] as EndpointSlice;
    expect(slice.endpoints).toHaveLength(51);
    expect(slice.endpoints.find((e) => e.targetRef?.name === "web-120")?.conditions?.ready).toBe(false);
    expect(slice.endpoints.some((e) => e.targetRef?.name === "web-150")).toBe(true);
  });

  it("keeps one empty placeholder for a Service without endpoints, and reuses it for the first pod", () => {
    const plan = reconcile({ service: service(), pods: [], existingSlices: [], nodeByName });
    expect(plan.create).toHaveLength(1);
    expect(plan.create[0]?.endpoints).toEqual([]);
    expect(plan.create[0]?.ports).toEqual([]);
    const slices = apply([], plan);
    expect(reconcile({ service: service(), pods: [], existingSlices: slices, nodeByName })).toEqual({
      create: [],
      update: [],
      delete: [],
      errors: [],
    });
    // The first pod: the placeholder (wrong ports) would be deleted and a slice created — an update instead.
    const withPod = reconcile({ service: service(), pods: [pod(1)], existingSlices: slices, nodeByName });
    expect(withPod.create).toEqual([]);
    expect(withPod.delete).toEqual([]);
    expect(withPod.update).toHaveLength(1);
    expect(withPod.update[0]?.metadata.name).toBe(slices[0]?.metadata.name);
    expect(withPod.update[0]?.endpoints.map((e) => e.addresses)).toEqual([["10.244.0.2"]]);
  });

  it("updates a slice whose Service labels changed, and skips a pod whose node is not known yet", () => {
    const slices = apply(
      [],
      reconcile({ service: service(), pods: [pod(1)], existingSlices: [], nodeByName }),
    );
    const relabelled = service();
    relabelled.metadata.labels = { tier: "back" };
    const p2 = pod(2);
    p2.spec.nodeName = "n9";
    const plan = reconcile({ service: relabelled, pods: [pod(1), p2], existingSlices: slices, nodeByName });
    expect(plan.update).toHaveLength(1);
    expect(plan.update[0]?.metadata.labels?.tier).toBe("back");
    expect(plan.update[0]?.endpoints).toHaveLength(1);
    expect(plan.errors).toEqual(["skipping Pod web-2 for Service default/web: Node n9 Not Found"]);
  });
});
