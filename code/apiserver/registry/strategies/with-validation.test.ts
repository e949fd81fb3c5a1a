import { describe, expect, it } from "vitest";
import { setDefaults } from "../../../api/defaults.ts";
import { fieldErrorToString } from "../../../api/field-errors.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { strategyFor } from "../rest-storage.ts";

// The strategies wired to the real defaults and validation (code/api/), in the order the
// generic store calls them: defaults, prepareForCreate, validate, canonicalize.
function create(group: string, resource: string, obj: KubeObject): { obj: KubeObject; errors: string[] } {
  const strategy = strategyFor(group, resource);
  setDefaults(obj);
  strategy.prepareForCreate(obj);
  const errors = strategy.validate(obj).map(fieldErrorToString);
  if (errors.length === 0) strategy.canonicalize?.(obj);
  return { obj, errors };
}

describe("strategies with the real validation", () => {
  it("a pod with only limits is defaulted, prepared as Pending/Guaranteed and valid", () => {
    const { obj, errors } = create("", "pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "default" },
      spec: {
        containers: [
          { name: "c", image: "nginx:1.27", resources: { limits: { cpu: "500m", memory: "128Mi" } } },
        ],
      },
      status: { phase: "Running" },
    });
    expect(errors).toEqual([]);
    expect(obj.status).toEqual({ phase: "Pending", qosClass: "Guaranteed" });
  });

  it("an invalid pod is reported, not thrown", () => {
    const { errors } = create("", "pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "default" },
      spec: { containers: [] },
    });
    expect(errors.length).toBeGreaterThan(0);
  });

  it("a namespace gets its finalizer, phase and name label", () => {
    const { obj, errors } = create("", "namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team-a" },
    });
    expect(errors).toEqual([]);
    expect(obj.spec).toEqual({ finalizers: ["kubernetes"] });
    expect(obj.status).toEqual({ phase: "Active" });
    expect(obj.metadata.labels?.["kubernetes.io/metadata.name"]).toBe("team-a");
  });

  it("a deployment update that changes the selector is refused once", () => {
    const strategy = strategyFor("apps", "deployments");
    const deployment = (app: string): KubeObject => ({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default", generation: 1, resourceVersion: "5" },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app } },
        template: { metadata: { labels: { app } }, spec: { containers: [{ name: "c", image: "nginx" }] } },
      },
    });
    const old = deployment("web");
    setDefaults(old);
    const next = deployment("other");
    setDefaults(next);
    strategy.prepareForUpdate(next, old);
    const errors = strategy.validateUpdate(next, old).map(fieldErrorToString);
    expect(
      errors.filter((e) => e.startsWith("spec.selector") && e.endsWith("field is immutable")),
    ).toHaveLength(1);
    expect(next.metadata.generation).toBe(2);
  });
});
