/**
 * RBAC validation — what makes a rule, a role or a binding well formed.
 * Upstream: kubernetes pkg/apis/rbac/validation/validation.go.
 *
 * Solves:
 * - a rule with no verbs grants nothing and one with neither apiGroups nor resources is
 *   ambiguous: both are refused at write time, so the authorizer never has to guess;
 * - a namespaced Role may not name non-resource URLs (`/healthz` is in no namespace);
 * - a binding's `roleRef` is immutable: a binding that could be re-pointed from `view` to
 *   `cluster-admin` by anyone allowed to update it would skip the `bind` check at creation.
 *
 * Invariants: messages are upstream's, word for word.
 *
 * @upstream kubernetes/kubernetes pkg/apis/rbac/validation/validation.go (ValidateRole, ValidateClusterRole, ValidatePolicyRule, ValidateRoleBinding, ValidateRoleBindingUpdate, ValidateClusterRoleBinding, ValidateRoleBindingSubject)
 * @chapter 03-api-security
 */
import {
  childPath,
  type FieldError,
  GoValue,
  indexPath,
  invalid,
  notSupported,
  required,
} from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import {
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "./object-meta-validation.ts";
import {
  type AggregationRule,
  GroupKind,
  type PolicyRule,
  RBAC_GROUP,
  type RoleRef,
  ServiceAccountKind,
  type Subject,
  UserKind,
} from "./rbac.ts";
import { nameIsDNSSubdomain, validatePathSegmentName } from "./string-validation.ts";

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

// #region validate-policy-rule
/** ValidatePolicyRule: verbs always; either non-resource URLs (cluster roles only) or groups and resources. */
export function validatePolicyRule(rule: PolicyRule, isNamespaced: boolean, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (list(rule.verbs).length === 0) {
    errors.push(required(childPath(path, "verbs"), "verbs must contain at least one value"));
  }
  if (list(rule.nonResourceURLs).length > 0) {
    const at = childPath(path, "nonResourceURLs");
    if (isNamespaced) {
      errors.push(invalid(at, rule.nonResourceURLs, "namespaced rules cannot apply to non-resource URLs"));
    }
    if (list(rule.apiGroups).length > 0 || list(rule.resources).length > 0) {
      errors.push(
        invalid(
          at,
          rule.nonResourceURLs,
          "rules cannot apply to API resources and non-resource URLs at the same time",
        ),
      );
    }
    return errors;
  }
  if (list(rule.apiGroups).length === 0) {
    errors.push(required(childPath(path, "apiGroups"), "resource rules must supply at least one api group"));
  }
  if (list(rule.resources).length === 0) {
    errors.push(required(childPath(path, "resources"), "resource rules must supply at least one resource"));
  }
  return errors;
}
// #endregion validate-policy-rule

function validateRules(rules: unknown, isNamespaced: boolean): FieldError[] {
  return list(rules).flatMap((r, i) =>
    validatePolicyRule((r ?? {}) as PolicyRule, isNamespaced, indexPath("rules", i)),
  );
}

export function validateRole(role: KubeObject): FieldError[] {
  return [
    ...validateObjectMeta(role.metadata, true, validatePathSegmentName),
    ...validateRules(role.rules, true),
  ];
}

export function validateRoleUpdate(role: KubeObject, old: KubeObject): FieldError[] {
  return [...validateObjectMetaUpdate(role.metadata, old.metadata), ...validateRole(role)];
}

/** ValidateClusterRole: the rules, and an aggregationRule with at least one valid selector. */
export function validateClusterRole(role: KubeObject): FieldError[] {
  const errors = [
    ...validateObjectMeta(role.metadata, false, validatePathSegmentName),
    ...validateRules(role.rules, false),
  ];
  const aggregation = role.aggregationRule as AggregationRule | undefined | null;
  if (aggregation) {
    const selectors = list(aggregation.clusterRoleSelectors);
    const at = childPath("aggregationRule", "clusterRoleSelectors");
    if (selectors.length === 0) {
      errors.push(required(at, "at least one clusterRoleSelector required if aggregationRule is non-nil"));
    }
    selectors.forEach((s, i) => {
      errors.push(...validateLabelSelector(s, indexPath(at, i)));
    });
  }
  return errors;
}

export function validateClusterRoleUpdate(role: KubeObject, old: KubeObject): FieldError[] {
  return [...validateObjectMetaUpdate(role.metadata, old.metadata), ...validateClusterRole(role)];
}

// #region validate-binding
/** ValidateRoleBindingSubject: a name; a known kind with its apiGroup; a namespace for a cluster binding's SA. */
export function validateRoleBindingSubject(
  subject: Subject,
  isNamespaced: boolean,
  path: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const name = typeof subject.name === "string" ? subject.name : "";
  const apiGroup = subject.apiGroup ?? "";
  if (name.length === 0) errors.push(required(childPath(path, "name")));
  switch (subject.kind) {
    case ServiceAccountKind:
      if (name.length > 0) {
        for (const msg of nameIsDNSSubdomain(name, false))
          errors.push(invalid(childPath(path, "name"), name, msg));
      }
      if (apiGroup.length > 0) errors.push(notSupported(childPath(path, "apiGroup"), apiGroup, [""]));
      if (!isNamespaced && !subject.namespace) errors.push(required(childPath(path, "namespace")));
      break;
    case UserKind:
    case GroupKind:
      if (apiGroup !== RBAC_GROUP)
        errors.push(notSupported(childPath(path, "apiGroup"), apiGroup, [RBAC_GROUP]));
      break;
    default:
      errors.push(
        notSupported(childPath(path, "kind"), subject.kind ?? "", [ServiceAccountKind, UserKind, GroupKind]),
      );
  }
  return errors;
}

function validateRoleRef(ref: RoleRef | undefined, kinds: readonly string[]): FieldError[] {
  const r = (ref ?? {}) as Partial<RoleRef>;
  const errors: FieldError[] = [];
  if ((r.apiGroup ?? "") !== RBAC_GROUP) {
    errors.push(notSupported("roleRef.apiGroup", r.apiGroup ?? "", [RBAC_GROUP]));
  }
  if (!kinds.includes(r.kind ?? "")) errors.push(notSupported("roleRef.kind", r.kind ?? "", kinds));
  if (!r.name) errors.push(required("roleRef.name"));
  else
    for (const msg of validatePathSegmentName(r.name, false))
      errors.push(invalid("roleRef.name", r.name, msg));
  return errors;
}

function validateBinding(binding: KubeObject, isNamespaced: boolean): FieldError[] {
  const errors = validateObjectMeta(binding.metadata, isNamespaced, validatePathSegmentName);
  errors.push(
    ...validateRoleRef(binding.roleRef as RoleRef, isNamespaced ? ["Role", "ClusterRole"] : ["ClusterRole"]),
  );
  list(binding.subjects).forEach((s, i) => {
    errors.push(...validateRoleBindingSubject((s ?? {}) as Subject, isNamespaced, indexPath("subjects", i)));
  });
  return errors;
}

export const validateRoleBinding = (b: KubeObject): FieldError[] => validateBinding(b, true);
export const validateClusterRoleBinding = (b: KubeObject): FieldError[] => validateBinding(b, false);

/** ValidateRoleBindingUpdate: everything a create checks, and the roleRef exactly as it was. */
function validateBindingUpdate(b: KubeObject, old: KubeObject, isNamespaced: boolean): FieldError[] {
  const errors = [...validateObjectMetaUpdate(b.metadata, old.metadata), ...validateBinding(b, isNamespaced)];
  const ref = (b.roleRef ?? {}) as Partial<RoleRef>;
  const oldRef = (old.roleRef ?? {}) as Partial<RoleRef>;
  if (ref.apiGroup !== oldRef.apiGroup || ref.kind !== oldRef.kind || ref.name !== oldRef.name) {
    // Go prints the struct with %#v: rbac.RoleRef{APIGroup:"…", Kind:"…", Name:"…"}.
    const text = `rbac.RoleRef{APIGroup:${JSON.stringify(ref.apiGroup ?? "")}, Kind:${JSON.stringify(ref.kind ?? "")}, Name:${JSON.stringify(ref.name ?? "")}}`;
    errors.push(invalid("roleRef", new GoValue(text, b.roleRef), "cannot change roleRef"));
  }
  return errors;
}

export const validateRoleBindingUpdate = (b: KubeObject, old: KubeObject): FieldError[] =>
  validateBindingUpdate(b, old, true);
export const validateClusterRoleBindingUpdate = (b: KubeObject, old: KubeObject): FieldError[] =>
  validateBindingUpdate(b, old, false);
// #endregion validate-binding
