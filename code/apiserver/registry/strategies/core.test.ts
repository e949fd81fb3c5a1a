import { describe, expect, it, vi } from "vitest";
import type { Lease } from "../../../api/coordination.ts";
import type { Event, Namespace, Node, Service } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";

const validation = vi.hoisted(() => ({
  validateCreate: vi.fn(() => []),
  validateUpdate: vi.fn(() => []),
  validateStatusUpdate: vi.fn(() => []),
  validateNamespaceFinalizeUpdate: vi.fn(() => []),
}));
vi.mock("./validation.ts", () => validation);

const { nodeStrategy } = await import("./nodes.ts");
const { namespaceStrategy, namespaceFinalizeStrategy } = await import("./namespaces.ts");
const { serviceStrategy } = await import("./services.ts");
const { eventStrategy } = await import("./events.ts");
const { secretStrategy } = await import("./secrets.ts");
const { leaseStrategy } = await import("./leases.ts");
const { endpointsStrategy } = await import("./endpoints.ts");
const { configMapStrategy } = await import("./configmaps.ts");
const { serviceAccountStrategy } = await import("./serviceaccounts.ts");
const { priorityClassStrategy } = await import("./priorityclasses.ts");

describe("node strategy", () => {
  const node = (unschedulable: boolean, ready: "True" | "False"): Node => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "n1" },
    spec: { unschedulable },
    status: { conditions: [{ type: "Ready", status: ready }] },
  });

  it("keeps the status a kubelet registers with", () => {
    const n = node(false, "True");
    nodeStrategy.prepareForCreate(n);
    expect(n.status?.conditions?.[0].status).toBe("True");
  });

  it("a cordon keeps the heartbeat status; a heartbeat keeps the cordon", () => {
    const cordoned = node(true, "False");
    nodeStrategy.prepareForUpdate(cordoned, node(false, "True"));
    expect(cordoned.spec?.unschedulable).toBe(true);
    expect(cordoned.status?.conditions?.[0].status).toBe("True");

    const heartbeat = node(false, "True");
    nodeStrategy.status?.prepareForUpdate(heartbeat, node(true, "False"));
    expect(heartbeat.spec?.unschedulable).toBe(true);
    expect(heartbeat.status?.conditions?.[0].status).toBe("True");
  });

  it("is cluster-scoped and selects on spec.unschedulable", () => {
    expect(nodeStrategy.namespaceScoped).toBe(false);
    expect(nodeStrategy.selectableFields(node(true, "True"))).toEqual({
      "metadata.name": "n1",
      "spec.unschedulable": "true",
    });
    expect(nodeStrategy.selectableFields({ metadata: {} } as KubeObject)["spec.unschedulable"]).toBe("false");
    expect(nodeStrategy.fieldLabels).toEqual(["metadata.name", "spec.unschedulable"]);
  });
});

describe("namespace strategy", () => {
  const ns = (extra: Partial<Namespace> = {}): Namespace => ({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "team-a" },
    ...extra,
  });

  it("create: phase Active and the kubernetes finalizer, added once", () => {
    const n = ns({ status: { phase: "Terminating" } });
    namespaceStrategy.prepareForCreate(n);
    expect(n.status).toEqual({ phase: "Active" });
    expect(n.spec?.finalizers).toEqual(["kubernetes"]);

    const own = ns({ spec: { finalizers: ["example.com/x", "kubernetes"] } });
    namespaceStrategy.prepareForCreate(own);
    expect(own.spec?.finalizers).toEqual(["example.com/x", "kubernetes"]);

    const other = ns({ spec: { finalizers: ["example.com/x"] } });
    namespaceStrategy.prepareForCreate(other);
    expect(other.spec?.finalizers).toEqual(["example.com/x", "kubernetes"]);
  });

  it("update: cannot drop the finalizer or change the phase", () => {
    const old = ns({ spec: { finalizers: ["kubernetes"] }, status: { phase: "Active" } });
    const next = ns({ spec: { finalizers: [] }, status: { phase: "Terminating" } });
    namespaceStrategy.prepareForUpdate(next, old);
    expect(next.spec?.finalizers).toEqual(["kubernetes"]);
    expect(next.status).toEqual({ phase: "Active" });
  });

  it("finalize: may change the finalizers but not the status; status: the reverse", () => {
    const old = ns({ spec: { finalizers: ["kubernetes"] }, status: { phase: "Terminating" } });
    const finalized = ns({ spec: { finalizers: [] }, status: { phase: "Active" } });
    namespaceFinalizeStrategy.prepareForUpdate(finalized, old);
    expect(finalized.spec?.finalizers).toEqual([]);
    expect(finalized.status).toEqual({ phase: "Terminating" });

    const statusWrite = ns({ spec: { finalizers: [] }, status: { phase: "Active" } });
    namespaceStrategy.status?.prepareForUpdate(statusWrite, old);
    expect(statusWrite.spec?.finalizers).toEqual(["kubernetes"]);
    expect(statusWrite.status).toEqual({ phase: "Active" });
  });

  it("finalize validates with ValidateNamespaceFinalizeUpdate, not the main update rules", () => {
    const old = ns({ spec: { finalizers: ["kubernetes"] } });
    const finalized = ns({ spec: { finalizers: [] } });
    validation.validateUpdate.mockClear();
    validation.validateNamespaceFinalizeUpdate.mockClear();
    namespaceFinalizeStrategy.validateUpdate(finalized, old);
    expect(validation.validateNamespaceFinalizeUpdate).toHaveBeenCalledWith(finalized, old);
    expect(validation.validateUpdate).not.toHaveBeenCalled();
  });

  it("canonicalize labels the namespace with its name", () => {
    const n = ns();
    n.metadata.labels = { "kubernetes.io/metadata.name": "wrong", team: "a" };
    namespaceStrategy.canonicalize?.(n);
    expect(n.metadata.labels).toEqual({ "kubernetes.io/metadata.name": "team-a", team: "a" });
    expect(namespaceStrategy.status?.canonicalize).toBe(namespaceStrategy.canonicalize);
  });

  it("selects on status.phase (and the legacy `name`)", () => {
    expect(namespaceStrategy.selectableFields(ns({ status: { phase: "Active" } }))).toEqual({
      "metadata.name": "team-a",
      "status.phase": "Active",
      name: "team-a",
    });
    expect(namespaceStrategy.fieldLabels).toEqual(["status.phase", "metadata.name"]);
  });
});

describe("service strategy", () => {
  const svc = (spec: Service["spec"], status?: Service["status"]): Service => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default" },
    spec,
    status,
  });

  it("create clears the load-balancer status; a PUT may create", () => {
    const s = svc({ type: "LoadBalancer" }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } });
    serviceStrategy.prepareForCreate(s);
    expect(s.status).toEqual({ loadBalancer: {} });
    expect(serviceStrategy.allowCreateOnUpdate).toBe(true);
  });

  it("update keeps the status", () => {
    const old = svc({ type: "LoadBalancer" }, { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } });
    const next = svc({ type: "LoadBalancer" });
    serviceStrategy.prepareForUpdate(next, old);
    expect(next.status).toEqual(old.status);
  });

  it("NodePort -> ClusterIP wipes node ports the user left unchanged, keeps edited ones", () => {
    const old = svc({ type: "NodePort", clusterIP: "10.96.0.10", ports: [{ port: 80, nodePort: 30080 }] });
    const next = svc({ type: "ClusterIP", clusterIP: "10.96.0.10", ports: [{ port: 80, nodePort: 30080 }] });
    serviceStrategy.prepareForUpdate(next, old);
    expect(next.spec?.ports?.[0].nodePort).toBeUndefined();
    expect(next.spec?.clusterIP).toBe("10.96.0.10");

    const edited = svc({ type: "ClusterIP", ports: [{ port: 80, nodePort: 30081 }] });
    serviceStrategy.prepareForUpdate(edited, old);
    expect(edited.spec?.ports?.[0].nodePort).toBe(30081);
  });

  it("-> ExternalName wipes an unchanged cluster IP; LoadBalancer -> ClusterIP drops the LB status", () => {
    const old = svc(
      {
        type: "LoadBalancer",
        clusterIP: "10.96.0.10",
        clusterIPs: ["10.96.0.10"],
        externalTrafficPolicy: "Cluster",
      },
      { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
    );
    const ext = svc({
      type: "ExternalName",
      externalName: "example.com",
      clusterIP: "10.96.0.10",
      clusterIPs: ["10.96.0.10"],
      externalTrafficPolicy: "Cluster",
    });
    serviceStrategy.prepareForUpdate(ext, old);
    expect(ext.spec?.clusterIP).toBeUndefined();
    expect(ext.spec?.clusterIPs).toBeUndefined();
    expect(ext.spec?.externalTrafficPolicy).toBeUndefined();
    expect(ext.status).toEqual({ loadBalancer: {} });
  });

  it("status write keeps the spec; selects on spec.clusterIP and spec.type", () => {
    const old = svc({ type: "ClusterIP", clusterIP: "10.96.0.1" });
    const next = svc({ type: "NodePort" }, { loadBalancer: {} });
    serviceStrategy.status?.prepareForUpdate(next, old);
    expect(next.spec).toEqual(old.spec);
    expect(serviceStrategy.selectableFields(old)).toEqual({
      "metadata.name": "web",
      "metadata.namespace": "default",
      "spec.clusterIP": "10.96.0.1",
      "spec.type": "ClusterIP",
    });
  });
});

describe("event strategy", () => {
  const event: Event = {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "web.17a", namespace: "default" },
    involvedObject: {
      kind: "Pod",
      namespace: "default",
      name: "web",
      uid: "u1",
      apiVersion: "v1",
      fieldPath: "spec.containers{c}",
    },
    reason: "Pulled",
    type: "Normal",
    source: { component: "kubelet", host: "n1" },
  };

  it("selects on the involved object, reason, source and type", () => {
    expect(eventStrategy.selectableFields(event)).toEqual({
      "metadata.name": "web.17a",
      "metadata.namespace": "default",
      "involvedObject.kind": "Pod",
      "involvedObject.namespace": "default",
      "involvedObject.name": "web",
      "involvedObject.uid": "u1",
      "involvedObject.apiVersion": "v1",
      "involvedObject.resourceVersion": "",
      "involvedObject.fieldPath": "spec.containers{c}",
      reason: "Pulled",
      reportingComponent: "",
      source: "kubelet",
      type: "Normal",
    });
  });

  it("source falls back to the reporting controller", () => {
    const fields = eventStrategy.selectableFields({
      ...event,
      source: {},
      reportingComponent: "default-scheduler",
    });
    expect(fields.source).toBe("default-scheduler");
    expect(fields.reportingComponent).toBe("default-scheduler");
  });

  it("a PUT may create an event", () => {
    expect(eventStrategy.allowCreateOnUpdate).toBe(true);
    expect(eventStrategy.fieldLabels).toContain("involvedObject.name");
  });
});

describe("lease strategy", () => {
  it("a PUT may create, but an update must name the resourceVersion it read", () => {
    expect(leaseStrategy.allowCreateOnUpdate).toBe(true);
    expect(leaseStrategy.allowUnconditionalUpdate).toBe(false);
  });

  it("drops the alpha coordinated-election fields unless already stored", () => {
    const lease = (spec: Record<string, unknown>): Lease => ({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "l", namespace: "kube-system" },
      spec,
    });
    const created = lease({ holderIdentity: "a", strategy: "OldestEmulationVersion", preferredHolder: "b" });
    leaseStrategy.prepareForCreate(created);
    expect(created.spec).toEqual({ holderIdentity: "a" });

    const old = lease({ holderIdentity: "a", strategy: "OldestEmulationVersion" });
    const next = lease({ holderIdentity: "b", strategy: "OldestEmulationVersion", preferredHolder: "c" });
    leaseStrategy.prepareForUpdate(next, old);
    expect(next.spec).toEqual({ holderIdentity: "b", strategy: "OldestEmulationVersion" });
  });
});

describe("plain-data strategies", () => {
  it("secrets select on type", () => {
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", namespace: "d" },
      type: "kubernetes.io/tls",
    };
    expect(secretStrategy.selectableFields(secret)).toEqual({
      "metadata.name": "s",
      "metadata.namespace": "d",
      type: "kubernetes.io/tls",
    });
  });

  it("prepare nothing and follow upstream's update policies", () => {
    const cases = [
      [configMapStrategy, false],
      [secretStrategy, false],
      [serviceAccountStrategy, false],
      [endpointsStrategy, true],
      [priorityClassStrategy, false],
    ] as const;
    for (const [strategy, createOnUpdate] of cases) {
      const obj: KubeObject = { metadata: { name: "x" }, data: { a: "b" }, status: { keep: true } };
      const before = structuredClone(obj);
      strategy.prepareForCreate(obj);
      strategy.prepareForUpdate(obj, { metadata: { name: "x" } });
      expect(obj).toEqual(before);
      expect(strategy.allowCreateOnUpdate).toBe(createOnUpdate);
      expect(strategy.allowUnconditionalUpdate).toBe(true);
      expect(strategy.status).toBeUndefined();
    }
    expect(priorityClassStrategy.namespaceScoped).toBe(false);
  });
});
