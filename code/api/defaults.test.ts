import { describe, expect, it } from "vitest";
import { imageTag, setDefaults } from "./defaults.ts";
import type { KubeObject } from "./meta.ts";

// Expected values are upstream v1.32's defaulters (pkg/apis/core/v1/defaults.go,
// pkg/apis/apps/v1/defaults.go, pkg/apis/scheduling/v1/defaults.go and the +default markers),
// checked field by field. `kubectl ... --dry-run=client -o yaml` is no oracle here: it shows
// what the client sends, before any server-side defaulting.

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of the defaulted JSON
function defaulted(object: KubeObject): Record<string, any> & KubeObject {
  const copy = structuredClone(object);
  setDefaults(copy);
  return copy;
}

const minimalPod = (): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "default" },
  spec: { containers: [{ name: "web", image: "nginx" }] },
});

describe("pod defaults", () => {
  it("fills the pod spec fields upstream defaults, and nothing else at the top level", () => {
    const pod = defaulted(minimalPod());
    expect(pod.spec).toEqual({
      containers: [
        {
          name: "web",
          image: "nginx",
          imagePullPolicy: "Always",
          terminationMessagePath: "/dev/termination-log",
          terminationMessagePolicy: "File",
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      securityContext: {},
      schedulerName: "default-scheduler",
      enableServiceLinks: true,
    });
    // Status and priority are the strategy's and admission's business, not defaulting's.
    expect(pod.status).toBeUndefined();
    expect((pod.spec as { priority?: number }).priority).toBeUndefined();
  });

  it("defaults a pod sent with no spec (or spec: null) as Go's zero PodSpec (found by the secured fuzz)", () => {
    // Without it, admission met `spec` undefined: the ServiceAccount plugin's TypeError was a 500;
    // now the pod reaches validation and is refused with 422 (spec.containers: Required value).
    const zero = {
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      securityContext: {},
      schedulerName: "default-scheduler",
      enableServiceLinks: true,
    };
    const { spec: _, ...noSpec } = minimalPod();
    expect(defaulted(noSpec as KubeObject).spec).toEqual(zero);
    expect(defaulted({ ...minimalPod(), spec: null } as unknown as KubeObject).spec).toEqual(zero);
  });

  it.each([
    ["nginx", "Always"],
    ["nginx:latest", "Always"],
    ["nginx:1.27", "IfNotPresent"],
    ["registry.example.com:5000/team/app", "Always"],
    ["registry.example.com:5000/team/app:v2", "IfNotPresent"],
    ["nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "IfNotPresent"],
    ["nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "Always"],
    // Unparseable references (upper case repository, empty) are left to the kubelet: IfNotPresent.
    ["NGINX", "IfNotPresent"],
    ["", "IfNotPresent"],
  ])("image %j gets imagePullPolicy %s", (image, policy) => {
    const pod = minimalPod();
    (pod.spec as { containers: { image: string }[] }).containers[0].image = image;
    const c = (defaulted(pod).spec as { containers: { imagePullPolicy: string }[] }).containers[0];
    expect(c.imagePullPolicy).toBe(policy);
  });

  it("parses image tags as the registry grammar does", () => {
    expect(imageTag("localhost:5000/x")).toBe("latest");
    expect(imageTag("localhost:5000/x:dev")).toBe("dev");
    expect(imageTag("a/b/c:1.0")).toBe("1.0");
  });

  it("defaults probes, their HTTP actions, gRPC service, ports and env field refs", () => {
    const pod = minimalPod();
    Object.assign((pod.spec as { containers: object[] }).containers[0], {
      ports: [{ containerPort: 80 }, { containerPort: 53, protocol: "UDP" }],
      env: [{ name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }],
      livenessProbe: { httpGet: { port: 80 } },
      readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 5, failureThreshold: 0 },
      startupProbe: { grpc: { port: 9000 }, initialDelaySeconds: 2 },
      lifecycle: { preStop: { httpGet: { port: 80, path: "/quit" } } },
    });
    const c = (defaulted(pod).spec as { containers: Record<string, unknown>[] }).containers[0];
    expect(c.ports).toEqual([
      { containerPort: 80, protocol: "TCP" },
      { containerPort: 53, protocol: "UDP" },
    ]);
    expect(c.env).toEqual([
      { name: "NODE", valueFrom: { fieldRef: { fieldPath: "spec.nodeName", apiVersion: "v1" } } },
    ]);
    expect(c.livenessProbe).toEqual({
      httpGet: { port: 80, path: "/", scheme: "HTTP" },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    // An explicit value stays; a zero is "unset" for probes, as in Go (`if x == 0`).
    expect(c.readinessProbe).toEqual({
      tcpSocket: { port: 80 },
      periodSeconds: 5,
      failureThreshold: 3,
      timeoutSeconds: 1,
      successThreshold: 1,
    });
    expect(c.startupProbe).toMatchObject({
      grpc: { port: 9000, service: "" },
      initialDelaySeconds: 2,
      periodSeconds: 10,
    });
    expect(c.lifecycle).toEqual({ preStop: { httpGet: { port: 80, path: "/quit", scheme: "HTTP" } } });
  });

  it("copies limits into missing requests, keeping explicit requests", () => {
    const pod = minimalPod();
    (pod.spec as { containers: object[] }).containers[0] = {
      name: "web",
      image: "nginx",
      resources: { limits: { cpu: "500m", memory: "128Mi" }, requests: { cpu: "100m" } },
    };
    const c = (defaulted(pod).spec as { containers: { resources: unknown }[] }).containers[0];
    expect(c.resources).toEqual({
      limits: { cpu: "500m", memory: "128Mi" },
      requests: { cpu: "100m", memory: "128Mi" },
    });
  });

  it("defaults volumes: no source means emptyDir, projected keys get mode 0644", () => {
    const pod = minimalPod();
    (pod.spec as Record<string, unknown>).volumes = [
      { name: "scratch" },
      { name: "config", configMap: { name: "app" } },
      { name: "creds", secret: { secretName: "app", defaultMode: 0o400 } },
      { name: "host", hostPath: { path: "/var/log" } },
    ];
    expect((defaulted(pod).spec as { volumes: unknown }).volumes).toEqual([
      { name: "scratch", emptyDir: {} },
      { name: "config", configMap: { name: "app", defaultMode: 420 } },
      { name: "creds", secret: { secretName: "app", defaultMode: 256 } },
      { name: "host", hostPath: { path: "/var/log", type: "" } },
    ]);
  });

  it("keeps every value the client set, including a zero grace period", () => {
    const pod = minimalPod();
    Object.assign(pod.spec as object, {
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 0,
      dnsPolicy: "Default",
      schedulerName: "my-scheduler",
      enableServiceLinks: false,
      securityContext: { runAsUser: 1000 },
    });
    expect(defaulted(pod).spec).toMatchObject({
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 0,
      dnsPolicy: "Default",
      schedulerName: "my-scheduler",
      enableServiceLinks: false,
      securityContext: { runAsUser: 1000 },
    });
  });

  it("sets host ports from container ports under hostNetwork", () => {
    const pod = minimalPod();
    Object.assign(pod.spec as object, { hostNetwork: true });
    (pod.spec as { containers: object[] }).containers[0] = {
      name: "web",
      image: "nginx",
      ports: [{ containerPort: 8080 }],
    };
    const ports = (defaulted(pod).spec as { containers: { ports: unknown }[] }).containers[0].ports;
    expect(ports).toEqual([{ containerPort: 8080, hostPort: 8080, protocol: "TCP" }]);
  });

  it("is idempotent and does not crash on fields of the wrong type", () => {
    const once = defaulted(minimalPod());
    expect(defaulted(once)).toEqual(once);
    const broken: KubeObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {},
      spec: { containers: "nginx", volumes: [null, 3], initContainers: [{ ports: "80", livenessProbe: [] }] },
    };
    expect(() => setDefaults(broken)).not.toThrow();
  });
});

describe("workload defaults", () => {
  const template = {
    metadata: { labels: { app: "web" } },
    spec: { containers: [{ name: "web", image: "nginx:1.27" }] },
  };

  it("defaults a Deployment and its pod template (but not the pod-only enableServiceLinks)", () => {
    const d = defaulted({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default" },
      spec: { selector: { matchLabels: { app: "web" } }, template: structuredClone(template) },
    });
    const spec = d.spec as Record<string, unknown>;
    expect(spec.replicas).toBe(1);
    expect(spec.strategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" },
    });
    expect(spec.revisionHistoryLimit).toBe(10);
    expect(spec.progressDeadlineSeconds).toBe(600);
    const podSpec = (spec.template as { spec: Record<string, unknown> }).spec;
    expect(podSpec).toMatchObject({
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
      securityContext: {},
    });
    expect(podSpec.enableServiceLinks).toBeUndefined();
    expect((podSpec.containers as { imagePullPolicy: string }[])[0].imagePullPolicy).toBe("IfNotPresent");
  });

  it("keeps zero replicas, a Recreate strategy, and explicit rolling-update zeros", () => {
    const recreate = defaulted({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {},
      spec: { replicas: 0, strategy: { type: "Recreate" }, template: structuredClone(template) },
    });
    expect((recreate.spec as Record<string, unknown>).replicas).toBe(0);
    expect((recreate.spec as Record<string, unknown>).strategy).toEqual({ type: "Recreate" });
    const zeros = defaulted({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {},
      spec: { strategy: { rollingUpdate: { maxUnavailable: 0 } }, template: structuredClone(template) },
    });
    expect((zeros.spec as Record<string, unknown>).strategy).toEqual({
      type: "RollingUpdate",
      rollingUpdate: { maxUnavailable: 0, maxSurge: "25%" },
    });
  });

  it("defaults a ReplicaSet to one replica and defaults its template", () => {
    const rs = defaulted({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {},
      spec: { template: structuredClone(template) },
    });
    expect((rs.spec as Record<string, unknown>).replicas).toBe(1);
    expect((rs.spec as { template: { spec: { restartPolicy: string } } }).template.spec.restartPolicy).toBe(
      "Always",
    );
  });
});

describe("other kinds", () => {
  it("Service: type, affinity, port protocol and targetPort, traffic policies", () => {
    const svc = defaulted({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: { selector: { app: "web" }, ports: [{ port: 80 }, { port: 443, targetPort: "https" }] },
    });
    expect(svc.spec).toEqual({
      selector: { app: "web" },
      ports: [
        { port: 80, protocol: "TCP", targetPort: 80 },
        { port: 443, targetPort: "https", protocol: "TCP" },
      ],
      sessionAffinity: "None",
      type: "ClusterIP",
      internalTrafficPolicy: "Cluster",
    });
    // No clusterIP, ipFamilies or ipFamilyPolicy: the service registry allocates those.
  });

  it("Service: NodePort gets externalTrafficPolicy, LoadBalancer allocateLoadBalancerNodePorts, ClientIP a timeout", () => {
    const nodePort = defaulted({
      apiVersion: "v1",
      kind: "Service",
      metadata: {},
      spec: { type: "NodePort" },
    });
    expect(nodePort.spec).toMatchObject({
      externalTrafficPolicy: "Cluster",
      internalTrafficPolicy: "Cluster",
    });
    const lb = defaulted({ apiVersion: "v1", kind: "Service", metadata: {}, spec: { type: "LoadBalancer" } });
    expect(lb.spec).toMatchObject({ allocateLoadBalancerNodePorts: true, externalTrafficPolicy: "Cluster" });
    const sticky = defaulted({
      apiVersion: "v1",
      kind: "Service",
      metadata: {},
      spec: { sessionAffinity: "ClientIP" },
    });
    expect((sticky.spec as Record<string, unknown>).sessionAffinityConfig).toEqual({
      clientIP: { timeoutSeconds: 10800 },
    });
    const external = defaulted({
      apiVersion: "v1",
      kind: "Service",
      metadata: {},
      spec: { type: "ExternalName" },
    });
    expect(external.spec).toEqual({ type: "ExternalName", sessionAffinity: "None" });
  });

  it("Namespace: the metadata.name label and phase Active (finalizers are the strategy's)", () => {
    const ns = defaulted({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team-a", labels: { env: "dev" } },
    });
    expect(ns.metadata.labels).toEqual({ env: "dev", "kubernetes.io/metadata.name": "team-a" });
    expect(ns.status).toEqual({ phase: "Active" });
    expect(ns.spec).toBeUndefined();
  });

  it("Node: allocatable copied from capacity only when absent", () => {
    const node = defaulted({
      apiVersion: "v1",
      kind: "Node",
      metadata: {},
      status: { capacity: { cpu: "4", pods: "110" } },
    });
    expect((node.status as Record<string, unknown>).allocatable).toEqual({ cpu: "4", pods: "110" });
    const explicit = defaulted({
      apiVersion: "v1",
      kind: "Node",
      metadata: {},
      status: { capacity: { cpu: "4" }, allocatable: { cpu: "3500m" } },
    });
    expect((explicit.status as Record<string, unknown>).allocatable).toEqual({ cpu: "3500m" });
  });

  it("Secret stringData is merged into data (base64, overwriting) and dropped, as upstream's conversion does", () => {
    const secret = defaulted({
      apiVersion: "v1",
      kind: "Secret",
      metadata: {},
      data: { user: "b2xk", keep: "eA==" },
      stringData: { user: "admin", "pass word": "s3cr\u00e9t" },
    });
    expect(secret.stringData).toBeUndefined();
    expect(secret.data).toEqual({
      user: Buffer.from("admin").toString("base64"),
      keep: "eA==",
      "pass word": Buffer.from("s3cr\u00e9t", "utf8").toString("base64"),
    });
  });

  it("Secret type Opaque, Endpoints port protocol, PriorityClass preemption policy", () => {
    expect(defaulted({ apiVersion: "v1", kind: "Secret", metadata: {} }).type).toBe("Opaque");
    expect(
      defaulted({ apiVersion: "v1", kind: "Secret", metadata: {}, type: "kubernetes.io/tls" }).type,
    ).toBe("kubernetes.io/tls");
    const ep = defaulted({
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: {},
      subsets: [{ ports: [{ port: 80 }] }],
    });
    expect(ep.subsets).toEqual([{ ports: [{ port: 80, protocol: "TCP" }] }]);
    const pc = defaulted({
      apiVersion: "scheduling.k8s.io/v1",
      kind: "PriorityClass",
      metadata: {},
      value: 10,
    });
    expect(pc.preemptionPolicy).toBe("PreemptLowerPriority");
  });

  it("leaves kinds without defaulters untouched", () => {
    for (const [apiVersion, kind] of [
      ["v1", "ConfigMap"],
      ["v1", "Event"],
      ["v1", "ServiceAccount"],
      ["coordination.k8s.io/v1", "Lease"],
    ]) {
      const o: KubeObject = { apiVersion, kind, metadata: { name: "x" }, spec: { holderIdentity: "a" } };
      expect(defaulted(o)).toEqual(o);
    }
  });
});
