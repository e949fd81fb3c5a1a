import { describe, expect, it } from "vitest";
import { setDefaults } from "./defaults.ts";
import { fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import { validateObject, validateObjectStatusUpdate, validateObjectUpdate } from "./validation.ts";

// The dispatcher: each served kind reaches its own rules; a defaulted minimal object of every
// kind is valid (defaulting and validation agree), and a known-bad one is refused.

const minimal: KubeObject[] = [
  { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a" } },
  {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "default" },
    spec: { containers: [{ name: "web", image: "nginx" }] },
  },
  { apiVersion: "v1", kind: "Node", metadata: { name: "node-1" }, status: { capacity: { cpu: "2" } } },
  {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: "web.1", namespace: "default" },
    involvedObject: { kind: "Pod", name: "web", namespace: "default" },
  },
  { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: "default" }, data: { a: "b" } },
  { apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "default" }, data: { a: "Yg==" } },
  { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default", namespace: "default" } },
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default" },
    spec: { ports: [{ port: 80 }] },
  },
  { apiVersion: "v1", kind: "Endpoints", metadata: { name: "web", namespace: "default" }, subsets: [] },
  {
    apiVersion: "v1",
    kind: "Binding",
    metadata: { name: "web", namespace: "default" },
    target: { kind: "Node", name: "node-1" },
  },
  {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web", namespace: "default" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "nginx" }] },
      },
    },
  },
  {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default" },
    spec: {
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: { containers: [{ name: "web", image: "nginx" }] },
      },
    },
  },
  {
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: { name: "web", namespace: "default" },
    spec: { replicas: 3 },
  },
  {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "l", namespace: "default" },
    spec: {},
  },
  { apiVersion: "scheduling.k8s.io/v1", kind: "PriorityClass", metadata: { name: "high" }, value: 1000 },
  {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "inject" },
    webhooks: [
      {
        name: "inject.example.com",
        clientConfig: { url: "https://127.0.0.1:8443/mutate" },
        sideEffects: "None",
        admissionReviewVersions: ["v1"],
      },
    ],
  },
];

describe("validateObject", () => {
  it.each(minimal.map((o) => [`${o.apiVersion} ${o.kind}`, o] as const))(
    "a defaulted minimal %s is valid",
    (_name, object) => {
      const o = structuredClone(object);
      setDefaults(o);
      expect(validateObject(o).map(fieldErrorToString)).toEqual([]);
    },
  );

  it.each(minimal.map((o) => [`${o.apiVersion} ${o.kind}`, o] as const))(
    "%s reaches its own rules (a bad name is refused)",
    (_name, object) => {
      const o = structuredClone(object);
      setDefaults(o);
      o.metadata.name = "Bad_Name";
      // Core v1 Events get only the legacy namespace checks upstream, and a Binding only its target checks.
      const skipsMeta = o.kind === "Event" || o.kind === "Binding";
      expect(validateObject(o).some((e) => e.field === "metadata.name")).toBe(!skipsMeta);
    },
  );

  it("returns nothing for kinds it does not know", () => {
    expect(validateObject({ apiVersion: "example.com/v1", kind: "Widget", metadata: {} })).toEqual([]);
  });
});

describe("validateObjectUpdate and validateObjectStatusUpdate", () => {
  const pod = (): KubeObject => {
    const p = structuredClone(minimal[1]);
    setDefaults(p);
    p.metadata.resourceVersion = "3";
    return p;
  };

  it("uses the update rules: a pod's spec is frozen, its status is judged by the status rules", () => {
    const old = pod();
    const changedSpec = pod();
    (changedSpec.spec as { restartPolicy: string }).restartPolicy = "Never";
    expect(validateObjectUpdate(changedSpec, old).map(fieldErrorToString)[0]).toMatch(
      /^spec: Forbidden: pod updates may not change fields other than/,
    );
    const moved = pod();
    (moved.spec as { nodeName: string }).nodeName = "node-9";
    expect(validateObjectStatusUpdate(moved, old).map(fieldErrorToString)).toEqual([
      "status.nodeName: Forbidden: may not be changed directly",
    ]);
  });

  it("falls back to the metadata rules for kinds without status rules", () => {
    const old = structuredClone(minimal[7]);
    setDefaults(old);
    old.metadata.resourceVersion = "1";
    const renamed = { ...old, metadata: { ...old.metadata, name: "other" } };
    expect(validateObjectStatusUpdate(renamed, old).map(fieldErrorToString)).toEqual([
      'metadata.name: Invalid value: "other": field is immutable',
    ]);
  });
});
