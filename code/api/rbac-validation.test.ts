import { describe, expect, it } from "vitest";
import { fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import {
  validateClusterRole,
  validateClusterRoleBinding,
  validateRole,
  validateRoleBinding,
  validateRoleBindingUpdate,
} from "./rbac-validation.ts";

const msgs = (errs: ReturnType<typeof validateRole>) => errs.map(fieldErrorToString);
const role = (rules: unknown[], namespace = "default"): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "Role",
  metadata: { name: "r", namespace },
  rules,
});
const rb = (roleRef: unknown, subjects: unknown[] = []): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "RoleBinding",
  metadata: { name: "b", namespace: "default", resourceVersion: "1" },
  roleRef,
  subjects,
});
const ref = { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" };

describe("RBAC validation (upstream's messages)", () => {
  it("checks rules: verbs, groups and resources, URLs only in cluster roles", () => {
    expect(msgs(validateRole(role([{ apiGroups: [""], resources: ["pods"] }])))).toEqual([
      "rules[0].verbs: Required value: verbs must contain at least one value",
    ]);
    expect(msgs(validateRole(role([{ verbs: ["get"] }])))).toEqual([
      "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
      "rules[0].resources: Required value: resource rules must supply at least one resource",
    ]);
    expect(msgs(validateRole(role([{ verbs: ["get"], nonResourceURLs: ["/healthz"] }])))).toEqual([
      'rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs',
    ]);
    const cr = {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "c" },
      rules: [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
    };
    expect(validateClusterRole(cr)).toEqual([]);
    expect(msgs(validateClusterRole({ ...cr, aggregationRule: {} }))).toEqual([
      "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil",
    ]);
  });

  it("checks bindings: roleRef kind and group, subjects by kind", () => {
    expect(
      validateRoleBinding(
        rb(ref, [
          { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: "jane" },
          { kind: "ServiceAccount", name: "sa" },
        ]),
      ),
    ).toEqual([]);
    expect(msgs(validateRoleBinding(rb({ ...ref, kind: "Pod" })))).toEqual([
      'roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole"',
    ]);
    expect(
      msgs(validateClusterRoleBinding({ ...rb({ ...ref, kind: "Role" }), metadata: { name: "c" } })),
    ).toEqual(['roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"']);
    expect(msgs(validateRoleBinding(rb(ref, [{ kind: "Robot", name: "r2" }])))).toEqual([
      'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ]);
    expect(
      msgs(
        validateClusterRoleBinding({
          ...rb(ref, [{ kind: "ServiceAccount", name: "sa" }]),
          metadata: { name: "c" },
        }),
      ),
    ).toEqual(["subjects[0].namespace: Required value"]);
  });

  it("refuses a changed roleRef", () => {
    expect(msgs(validateRoleBindingUpdate(rb({ ...ref, name: "edit" }), rb(ref)))).toEqual([
      'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    ]);
  });
});
