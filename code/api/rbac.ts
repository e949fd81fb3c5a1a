/**
 * RBAC objects (group rbac.authorization.k8s.io, version v1) — roles say what may be done,
 * bindings say who may do it. Upstream: k8s.io/api's rbac/v1/types.go.
 *
 * Solves:
 * - permissions are granted to names (users, groups, service accounts), never to requests:
 *   a Role or ClusterRole is a list of PolicyRules (verbs × apiGroups × resources, optionally
 *   narrowed to resourceNames, or verbs × nonResourceURLs), and a RoleBinding or
 *   ClusterRoleBinding attaches one role to a list of subjects;
 * - one ClusterRole (`view`, `edit`) can be reused in every namespace: a RoleBinding may point
 *   at a ClusterRole and grants its rules inside the binding's namespace only;
 * - a ClusterRole with an `aggregationRule` is filled in by the server from every ClusterRole
 *   whose labels match, so an add-on extends `view` by shipping a labelled role.
 *
 * Invariants:
 * - RBAC only adds: there is no deny rule, so the order of rules and bindings never matters;
 * - a binding's roleRef never changes after creation (validation refuses it): changing what a
 *   binding grants means deleting and re-creating it, which a `bind` check sees again.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/rbac/v1/types.go (PolicyRule, Subject, RoleRef, Role, RoleBinding, ClusterRole, ClusterRoleBinding, AggregationRule)
 * @upstream kubernetes/kubernetes pkg/apis/rbac/v1/defaults.go (SetDefaults_Subject, SetDefaults_RoleBinding)
 * @chapter 03-api-security
 */
import type { KubeObject } from "./meta.ts";

export const RBAC_GROUP = "rbac.authorization.k8s.io";
export const RBAC_API_VERSION = `${RBAC_GROUP}/v1`;

/** The wildcards: `*` in verbs, apiGroups, resources and nonResourceURLs matches everything. */
export const VerbAll = "*";
export const APIGroupAll = "*";
export const ResourceAll = "*";
export const NonResourceAll = "*";

export const UserKind = "User";
export const GroupKind = "Group";
export const ServiceAccountKind = "ServiceAccount";

// #region policy-rule
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  /** `pods`, `pods/log`, `*` (everything), or `*` then a subresource (every resource's `scale`). */
  resources?: string[];
  resourceNames?: string[];
  /** `/healthz`, `/api/*` (a trailing `*` is a prefix match). Cluster roles only. */
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: string;
  /** "" for ServiceAccount, rbac.authorization.k8s.io for User and Group. */
  apiGroup?: string;
  name: string;
  /** ServiceAccount only; in a RoleBinding, empty means the binding's namespace. */
  namespace?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: string;
  name: string;
}
// #endregion policy-rule

export interface Role extends KubeObject {
  rules: PolicyRule[] | null;
}

export interface AggregationRule {
  clusterRoleSelectors?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] }[];
}

export interface ClusterRole extends KubeObject {
  rules: PolicyRule[] | null;
  aggregationRule?: AggregationRule;
}

export interface RoleBinding extends KubeObject {
  subjects?: Subject[];
  roleRef: RoleRef;
}

export type ClusterRoleBinding = RoleBinding;

// #region defaults
/** SetDefaults_Subject and SetDefaults_(Cluster)RoleBinding: the apiGroups a client may leave out. */
export function setDefaultsBinding(binding: KubeObject): void {
  const b = binding as Partial<RoleBinding>;
  if (b.roleRef && typeof b.roleRef === "object" && !b.roleRef.apiGroup) b.roleRef.apiGroup = RBAC_GROUP;
  for (const s of Array.isArray(b.subjects) ? b.subjects : []) {
    if (s && typeof s === "object" && !s.apiGroup && (s.kind === UserKind || s.kind === GroupKind)) {
      s.apiGroup = RBAC_GROUP;
    }
  }
}
// #endregion defaults
