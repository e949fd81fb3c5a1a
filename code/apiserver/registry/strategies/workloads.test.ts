import { describe, expect, it, vi } from "vitest";
import type { Deployment, ReplicaSet } from "../../../api/apps.ts";
import { invalid } from "../../../api/field-errors.ts";

const validation = vi.hoisted(() => ({
  validateCreate: vi.fn(() => []),
  validateUpdate: vi.fn((): unknown[] => []),
  validateStatusUpdate: vi.fn(() => []),
}));
vi.mock("./validation.ts", () => validation);

const { replicaSetStrategy } = await import("./replicasets.ts");
const { deploymentStrategy } = await import("./deployments.ts");

const template = {
  metadata: { labels: { app: "web" } },
  spec: { containers: [{ name: "c", image: "nginx" }] },
};

function rs(replicas: number, extra: Partial<ReplicaSet> = {}): ReplicaSet {
  return {
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web", namespace: "default", generation: 4 },
    spec: { replicas, selector: { matchLabels: { app: "web" } }, template: structuredClone(template) },
    ...extra,
  };
}

function deploy(replicas: number, extra: Partial<Deployment> = {}): Deployment {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "default", generation: 7, annotations: { a: "1" } },
    spec: { replicas, selector: { matchLabels: { app: "web" } }, template: structuredClone(template) },
    ...extra,
  };
}

describe("replicaset strategy", () => {
  it("create: clears the status (to upstream's {replicas: 0}) and starts at generation 1", () => {
    const r = rs(3, { status: { replicas: 9, readyReplicas: 9 } });
    r.metadata.generation = 42;
    replicaSetStrategy.prepareForCreate(r);
    expect(r.status).toEqual({ replicas: 0 });
    expect(r.metadata.generation).toBe(1);
  });

  it("update: a spec change bumps the generation, the status is kept", () => {
    const old = rs(3, { status: { replicas: 3, observedGeneration: 4 } });
    const next = rs(5, { status: { replicas: 0 } });
    replicaSetStrategy.prepareForUpdate(next, old);
    expect(next.metadata.generation).toBe(5);
    expect(next.status).toEqual({ replicas: 3, observedGeneration: 4 });
  });

  it("update: a label-only change, or re-sending absent fields as empty ones, keeps the generation", () => {
    const old = rs(3);
    const next = rs(3);
    next.metadata.labels = { new: "label" };
    next.spec.template.spec.nodeSelector = {};
    replicaSetStrategy.prepareForUpdate(next, old);
    expect(next.metadata.generation).toBe(4);
  });

  it("status write keeps the spec and the generation", () => {
    const old = rs(3);
    const next = rs(10, { status: { replicas: 3, readyReplicas: 2 } });
    replicaSetStrategy.status?.prepareForUpdate(next, old);
    expect(next.spec.replicas).toBe(3);
    expect(next.status).toEqual({ replicas: 3, readyReplicas: 2 });
    expect(next.metadata.generation).toBe(4);
  });

  it("the selector is immutable in apps/v1", () => {
    const old = rs(3);
    const next = rs(3);
    next.spec.selector = { matchLabels: { app: "other" } };
    expect(replicaSetStrategy.validateUpdate(next, old)).toEqual([
      invalid("spec.selector", { matchLabels: { app: "other" } }, "field is immutable"),
    ]);
    expect(replicaSetStrategy.validateUpdate(rs(3), old)).toEqual([]);
  });

  it("does not repeat the immutability error when the kind's rules already report it", () => {
    const old = rs(3);
    const next = rs(3);
    next.spec.selector = { matchLabels: { app: "other" } };
    const same = invalid("spec.selector", next.spec.selector, "field is immutable");
    validation.validateUpdate.mockReturnValueOnce([same]);
    expect(replicaSetStrategy.validateUpdate(next, old)).toEqual([same]);
  });

  it("selects on status.replicas", () => {
    expect(replicaSetStrategy.selectableFields(rs(3, { status: { replicas: 2 } }))).toEqual({
      "metadata.name": "web",
      "metadata.namespace": "default",
      "status.replicas": "2",
    });
    expect(replicaSetStrategy.fieldLabels).toContain("status.replicas");
  });
});

describe("deployment strategy", () => {
  it("create: clears the status and starts at generation 1", () => {
    const d = deploy(2, { status: { replicas: 5 } });
    deploymentStrategy.prepareForCreate(d);
    expect(d.status).toEqual({});
    expect(d.metadata.generation).toBe(1);
  });

  it("update: spec or annotation changes bump the generation; label changes do not", () => {
    const old = deploy(2, { status: { observedGeneration: 7 } });
    const scaled = deploy(3);
    deploymentStrategy.prepareForUpdate(scaled, old);
    expect(scaled.metadata.generation).toBe(8);
    expect(scaled.status).toEqual({ observedGeneration: 7 });

    const annotated = deploy(2);
    annotated.metadata.annotations = { a: "2" };
    deploymentStrategy.prepareForUpdate(annotated, old);
    expect(annotated.metadata.generation).toBe(8);

    const relabeled = deploy(2);
    relabeled.metadata.labels = { x: "y" };
    deploymentStrategy.prepareForUpdate(relabeled, old);
    expect(relabeled.metadata.generation).toBe(7);
  });

  it("status write keeps the spec and the labels", () => {
    const old = deploy(2);
    old.metadata.labels = { app: "web" };
    const next = deploy(9, { status: { availableReplicas: 2 } });
    next.metadata.labels = { hacked: "yes" };
    deploymentStrategy.status?.prepareForUpdate(next, old);
    expect(next.spec.replicas).toBe(2);
    expect(next.metadata.labels).toEqual({ app: "web" });
    expect(next.status).toEqual({ availableReplicas: 2 });
  });

  it("the selector is immutable", () => {
    const next = deploy(2);
    next.spec.selector = { matchExpressions: [{ key: "app", operator: "Exists" }] };
    expect(deploymentStrategy.validateUpdate(next, deploy(2))).toHaveLength(1);
  });

  it("has upstream's update policy", () => {
    expect(deploymentStrategy.allowCreateOnUpdate).toBe(false);
    expect(deploymentStrategy.allowUnconditionalUpdate).toBe(true);
    expect(deploymentStrategy.fieldLabels).toEqual(["metadata.name", "metadata.namespace"]);
  });
});
