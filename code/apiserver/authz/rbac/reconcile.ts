/**
 * Reconciliation — bring the cluster's default roles and bindings up to the bootstrap policy
 * at every start, without undoing what an administrator added. Upstream:
 * pkg/registry/rbac/reconciliation/reconcile_role.go and reconcile_rolebindings.go, run by
 * the `rbac/bootstrap-roles` post-start hook of pkg/registry/rbac/rest/storage_rbac.go.
 *
 * Solves:
 * - an upgraded server ships new rules for `view` or `system:kube-scheduler`: they must reach
 *   clusters created by older versions, so every start adds what is missing;
 * - an administrator who widened a default role must keep their rules: reconciliation only
 *   adds rules, subjects, labels and annotations, it never removes any;
 * - an administrator who wants a default role exactly as they wrote it sets
 *   `rbac.authorization.kubernetes.io/autoupdate: "false"`, and it is left alone.
 *
 * Invariants:
 * - a missing object is created; an existing one is updated only when something is missing;
 * - existing label and annotation values win over the bootstrap ones;
 * - a binding whose roleRef differs (roleRef is immutable) is deleted and re-created.
 *
 * @upstream kubernetes/kubernetes pkg/registry/rbac/reconciliation/reconcile_role.go (computeReconciledRole, ReconcileRoleOptions.Run)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/reconciliation/reconcile_rolebindings.go (computeReconciledRoleBinding, diffSubjectLists)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/rest/storage_rbac.go (PolicyData.EnsureRBACPolicy)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { ClusterRole, ClusterRoleBinding, Subject } from "../../../api/rbac.ts";
import { isStatusError } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import {
  autoupdateAnnotation,
  bootstrapClusterRoleBindings,
  bootstrapClusterRoles,
} from "./bootstrap-policy.ts";
import { controllerRoleBindings, controllerRoles } from "./controller-policy.ts";
import { covers } from "./policy-comparator.ts";

export type ReconcileOperation = "none" | "create" | "update" | "recreate";

const isProtected = (o: KubeObject): boolean => o.metadata.annotations?.[autoupdateAnnotation] === "false";

/** Labels and annotations: the expected ones added, the existing values kept. */
function mergeMeta(expected: KubeObject, result: KubeObject): boolean {
  let changed = false;
  for (const field of ["labels", "annotations"] as const) {
    const merged = { ...(expected.metadata[field] ?? {}), ...(result.metadata[field] ?? {}) };
    if (Object.keys(merged).length !== Object.keys(result.metadata[field] ?? {}).length) changed = true;
    if (Object.keys(merged).length) result.metadata[field] = merged;
  }
  return changed;
}

// #region reconcile-role
/** computeReconciledRole: the existing role plus whatever the expected one has that it lacks. */
export function computeReconciledRole(
  existing: ClusterRole,
  expected: ClusterRole,
): { role: ClusterRole; operation: ReconcileOperation; protected: boolean } {
  const role = structuredClone(existing) as ClusterRole;
  let changed = mergeMeta(expected, role);
  const [, missing] = covers(existing.rules ?? [], expected.rules ?? []);
  if (missing.length) {
    role.rules = [...(existing.rules ?? []), ...missing];
    changed = true;
  }
  const want = expected.aggregationRule?.clusterRoleSelectors ?? [];
  const have = role.aggregationRule?.clusterRoleSelectors ?? [];
  const missingSelectors = want.filter((w) => !have.some((h) => JSON.stringify(h) === JSON.stringify(w)));
  if (missingSelectors.length) {
    role.aggregationRule = { clusterRoleSelectors: [...have, ...missingSelectors] };
    changed = true;
  }
  return { role, operation: changed ? "update" : "none", protected: isProtected(existing) };
}
// #endregion reconcile-role

// #region reconcile-binding
const sameSubject = (a: Subject, b: Subject) =>
  a.kind === b.kind &&
  a.name === b.name &&
  (a.namespace ?? "") === (b.namespace ?? "") &&
  (a.apiGroup ?? "") === (b.apiGroup ?? "");

/** computeReconciledRoleBinding: missing subjects added; a different roleRef means re-create. */
export function computeReconciledBinding(
  existing: ClusterRoleBinding,
  expected: ClusterRoleBinding,
): { binding: ClusterRoleBinding; operation: ReconcileOperation; protected: boolean } {
  const prot = isProtected(existing);
  const ref = existing.roleRef;
  if (
    ref.apiGroup !== expected.roleRef.apiGroup ||
    ref.kind !== expected.roleRef.kind ||
    ref.name !== expected.roleRef.name
  ) {
    return { binding: structuredClone(expected), operation: "recreate", protected: prot };
  }
  const binding = structuredClone(existing) as ClusterRoleBinding;
  let changed = mergeMeta(expected, binding);
  const missing = (expected.subjects ?? []).filter(
    (s) => !(existing.subjects ?? []).some((e) => sameSubject(e, s)),
  );
  if (missing.length) {
    binding.subjects = [...(existing.subjects ?? []), ...missing];
    changed = true;
  }
  return { binding, operation: changed ? "update" : "none", protected: prot };
}
// #endregion reconcile-binding

async function getOrUndefined(store: Store, name: string): Promise<KubeObject | undefined> {
  try {
    return await store.get("", name);
  } catch (e) {
    if (isStatusError(e) && e.code === 404) return undefined;
    throw e;
  }
}

// #region ensure-rbac-policy
/**
 * EnsureRBACPolicy: every bootstrap ClusterRole, then every ClusterRoleBinding, reconciled;
 * the controllers' roles come after policy.go's, as storage_rbac.go appends them.
 */
export async function ensureRBACPolicy(clusterRoles: Store, clusterRoleBindings: Store): Promise<string[]> {
  const log: string[] = [];
  for (const expected of [...bootstrapClusterRoles(), ...controllerRoles()]) {
    const name = expected.metadata.name as string;
    const existing = await getOrUndefined(clusterRoles, name);
    if (!existing) {
      await clusterRoles.create("", structuredClone(expected));
      log.push(`created clusterrole.rbac.authorization.k8s.io/${name}`);
      continue;
    }
    const r = computeReconciledRole(existing as ClusterRole, expected);
    if (r.operation === "none") continue;
    if (r.protected) {
      log.push(`skipped reconcile-protected clusterrole.rbac.authorization.k8s.io/${name}`);
      continue;
    }
    await clusterRoles.update("", name, () => r.role);
    log.push(`updated clusterrole.rbac.authorization.k8s.io/${name}`);
  }
  for (const expected of [...bootstrapClusterRoleBindings(), ...controllerRoleBindings()]) {
    const name = expected.metadata.name as string;
    const existing = await getOrUndefined(clusterRoleBindings, name);
    if (!existing) {
      await clusterRoleBindings.create("", structuredClone(expected));
      log.push(`created clusterrolebinding.rbac.authorization.k8s.io/${name}`);
      continue;
    }
    const r = computeReconciledBinding(existing as ClusterRoleBinding, expected);
    if (r.operation === "none") continue;
    if (r.protected) {
      log.push(`skipped reconcile-protected clusterrolebinding.rbac.authorization.k8s.io/${name}`);
      continue;
    }
    if (r.operation === "recreate") {
      await clusterRoleBindings.delete("", name, {});
      await clusterRoleBindings.create("", r.binding);
    } else {
      await clusterRoleBindings.update("", name, () => r.binding);
    }
    log.push(
      `${r.operation === "recreate" ? "recreated" : "updated"} clusterrolebinding.rbac.authorization.k8s.io/${name}`,
    );
  }
  return log;
}
// #endregion ensure-rbac-policy
