import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { StatusError } from "../errors.ts";
import { fieldsToSet, pathString, setToFields } from "./fieldpath.ts";
import { lookupKind } from "./patch-meta.ts";
import { patchTypes, validatePatchOptions } from "./patch-options.ts";
import {
  applyServerSideApply,
  decodeApplyPatch,
  toFieldSet,
  updateManagedFields,
} from "./server-side-apply.ts";

const now = "2026-01-01T00:00:00Z";
const deploy = (replicas: number, extra: Record<string, unknown> = {}) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", labels: { app: "web" } },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: { containers: [{ name: "nginx", image: "nginx:1" }] },
    },
    ...extra,
  },
});
const opts = (fieldManager: string, force?: boolean) => ({
  fieldManager,
  force,
  apiVersion: "apps/v1",
  kind: "Deployment",
  now,
});

function statusOf(f: () => unknown): StatusError {
  try {
    f();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error("expected a StatusError");
}

describe("applyServerSideApply", () => {
  it("creates the object and records the manager's fields in upstream's FieldsV1 shape", () => {
    const out = applyServerSideApply(undefined, deploy(2), opts("kubectl"));
    expect(out.spec).toEqual(deploy(2).spec);
    expect(out.metadata.managedFields).toEqual([
      {
        manager: "kubectl",
        operation: "Apply",
        apiVersion: "apps/v1",
        time: now,
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": { "f:labels": { "f:app": {} } },
          "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
              "f:metadata": { "f:labels": { "f:app": {} } },
              "f:spec": {
                "f:containers": { 'k:{"name":"nginx"}': { ".": {}, "f:image": {}, "f:name": {} } },
              },
            },
          },
        },
      },
    ]);
  });

  it("a field another manager owns with another value is a 409 naming manager and path", () => {
    const live = applyServerSideApply(undefined, deploy(2), opts("kubectl"));
    const scaled = updateManagedFields(
      live,
      { ...live, spec: { ...(live.spec as object), replicas: 5 } },
      "hpa",
      "apps/v1",
      now,
    );
    const e = statusOf(() => applyServerSideApply(scaled, deploy(3), opts("kubectl")));
    expect(e.code).toBe(409);
    expect(e.reason).toBe("Conflict");
    expect(e.message).toBe('Apply failed with 1 conflict: conflict with "hpa" using apps/v1: .spec.replicas');
    expect(e.status.details?.causes).toEqual([
      {
        reason: "FieldManagerConflict",
        message: 'conflict with "hpa" using apps/v1',
        field: ".spec.replicas",
      },
    ]);
  });

  it("applying the value the other manager set is no conflict (shared ownership)", () => {
    const live = applyServerSideApply(undefined, deploy(2), opts("kubectl"));
    const scaled = updateManagedFields(
      live,
      { ...live, spec: { ...(live.spec as object), replicas: 5 } },
      "hpa",
      "apps/v1",
      now,
    );
    const out = applyServerSideApply(scaled, deploy(5), opts("kubectl"));
    expect((out.spec as { replicas: number }).replicas).toBe(5);
  });

  it("force takes the field: the other manager loses it (and its entry, once empty)", () => {
    const live = applyServerSideApply(undefined, deploy(2), opts("kubectl"));
    const scaled = updateManagedFields(
      live,
      { ...live, spec: { ...(live.spec as object), replicas: 5 } },
      "hpa",
      "apps/v1",
      now,
    );
    const out = applyServerSideApply(scaled, deploy(3), opts("kubectl", true));
    expect((out.spec as { replicas: number }).replicas).toBe(3);
    expect(out.metadata.managedFields!.map((e) => e.manager)).toEqual(["kubectl"]);
  });

  it("lists several conflicts grouped by manager", () => {
    const live = applyServerSideApply(undefined, deploy(2), opts("a"));
    const e = statusOf(() =>
      applyServerSideApply(
        live,
        { ...deploy(3), metadata: { name: "web", labels: { app: "other" } } },
        { ...opts("b"), now },
      ),
    );
    expect(e.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "a":\n- .metadata.labels.app\n- .spec.replicas',
    );
  });

  it("removes fields the manager stops applying, unless another manager owns them", () => {
    const first = applyServerSideApply(
      undefined,
      { ...deploy(2), metadata: { name: "web", labels: { app: "web", tier: "front", team: "x" } } },
      opts("kubectl"),
    );
    const shared = applyServerSideApply(
      first,
      { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", labels: { team: "x" } } },
      opts("other"),
    );
    const out = applyServerSideApply(shared, deploy(2), opts("kubectl"));
    expect(out.metadata.labels).toEqual({ app: "web", team: "x" });
  });

  it("removes a list item by key and a set member when no longer applied", () => {
    const two = deploy(1);
    two.spec.template.spec.containers.push({ name: "sidecar", image: "busybox" });
    const withFinalizer = { ...two, metadata: { ...two.metadata, finalizers: ["a", "b"] } };
    const live = applyServerSideApply(undefined, withFinalizer, opts("kubectl"));
    const out = applyServerSideApply(
      live,
      { ...deploy(1), metadata: { ...deploy(1).metadata, finalizers: ["a"] } },
      opts("kubectl"),
    );
    const spec = out.spec as ReturnType<typeof deploy>["spec"];
    expect(spec.template.spec.containers.map((c) => c.name)).toEqual(["nginx"]);
    expect(out.metadata.finalizers).toEqual(["a"]);
  });

  it("merges list items by key and keeps fields other managers set", () => {
    const live = applyServerSideApply(undefined, deploy(1), opts("kubectl"));
    const spec = structuredClone(live.spec) as ReturnType<typeof deploy>["spec"];
    (spec.template.spec.containers[0] as Record<string, unknown>).imagePullPolicy = "Always";
    const edited = updateManagedFields(live, { ...live, spec }, "kubectl-edit", "apps/v1", now);
    const next = deploy(1);
    next.spec.template.spec.containers[0]!.image = "nginx:2";
    const out = applyServerSideApply(edited, next, opts("kubectl"));
    expect((out.spec as typeof spec).template.spec.containers).toEqual([
      { name: "nginx", image: "nginx:2", imagePullPolicy: "Always" },
    ]);
  });

  it("refuses a configuration of another version, or one carrying managedFields", () => {
    expect(
      statusOf(() => applyServerSideApply(undefined, { ...deploy(1), apiVersion: "apps/v1beta1" }, opts("k")))
        .message,
    ).toBe(
      "Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1",
    );
    const withMF = { ...deploy(1), metadata: { name: "web", managedFields: [] } };
    const e = statusOf(() => applyServerSideApply(undefined, withMF, opts("k")));
    expect([e.code, e.message]).toEqual([400, "metadata.managedFields must be nil"]);
  });

  it("decodes YAML bodies; bad YAML is 400", () => {
    expect(decodeApplyPatch("apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n")).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      data: { a: "b" },
    });
    expect(statusOf(() => decodeApplyPatch("a: [")).code).toBe(400);
    expect(statusOf(() => decodeApplyPatch("- a\n- b\n")).message).toBe(
      "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}",
    );
    expect(decodeApplyPatch("")).toEqual({});
  });
});

describe("field sets", () => {
  it("round-trip through FieldsV1 and print as upstream paths", () => {
    const set = toFieldSet(
      { ...deploy(1), metadata: { name: "web", finalizers: ["x"] } },
      lookupKind("apps/v1", "Deployment"),
    );
    const paths = set.list().map(pathString);
    expect(paths).toContain('.spec.template.spec.containers[name="nginx"].image');
    expect(paths).toContain('.metadata.finalizers[="x"]');
    expect(paths).not.toContain(".metadata.name");
    expect(fieldsToSet(setToFields(set)).list().map(pathString).sort()).toEqual([...paths].sort());
  });

  it("updateManagedFields moves changed fields to the writer", () => {
    const created = updateManagedFields(undefined, deploy(1) as KubeObject, "kubectl-create", "apps/v1", now);
    expect(created.metadata.managedFields!.map((e) => [e.manager, e.operation])).toEqual([
      ["kubectl-create", "Update"],
    ]);
    const scaled = updateManagedFields(
      created,
      { ...created, spec: { ...(created.spec as object), replicas: 4 } },
      "hpa",
      "apps/v1",
      now,
    );
    const owners = Object.fromEntries(
      scaled.metadata.managedFields!.map((e) => [e.manager, fieldsToSet(e.fieldsV1).list().map(pathString)]),
    );
    expect(owners.hpa).toEqual([".spec.replicas"]);
    expect(owners["kubectl-create"]).not.toContain(".spec.replicas");
  });
});

describe("validatePatchOptions", () => {
  it("apply needs a fieldManager: upstream's 422 on PatchOptions", () => {
    const e = validatePatchOptions({}, patchTypes.apply)!;
    expect([e.code, e.reason, e.message]).toEqual([
      422,
      "Invalid",
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    ]);
    expect(validatePatchOptions({ fieldManager: "kubectl" }, patchTypes.apply)).toBeUndefined();
  });

  it("force is forbidden outside apply", () => {
    expect(validatePatchOptions({ force: true }, patchTypes.merge)!.message).toBe(
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
  });
});
