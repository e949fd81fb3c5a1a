/**
 * PodDisruptionBudget validation — a budget says one thing (a floor or a ceiling), in a count
 * or a percentage, over a well-formed selector; its status holds counts that are never negative.
 * Upstream: kubernetes pkg/apis/policy/validation/validation.go.
 *
 * Solves:
 * - "at least 2 available" and "at most 1 unavailable" together would be two budgets in one,
 *   and the controller could not say which one `disruptionsAllowed` obeys: refused with
 *   "minAvailable and maxUnavailable cannot be both set";
 * - `"150%"` of the pods can never be available: a percentage above 100 is refused;
 * - the controller's status write is checked too: a negative `disruptionsAllowed` would read as
 *   "no" to some evicters and as a bug to others.
 *
 * Invariants:
 * - the spec is validated the same on create and update (a budget's spec may change, since
 *   Kubernetes 1.15; only the generation moves);
 * - the status rules are policy/v1's (upstream skips the counts for v1beta1).
 *
 * @upstream kubernetes/kubernetes pkg/apis/policy/validation/validation.go (ValidatePodDisruptionBudget, ValidatePodDisruptionBudgetSpec, ValidatePodDisruptionBudgetStatusUpdate, supportedUnhealthyPodEvictionPolicies)
 * @upstream kubernetes/kubernetes pkg/apis/apps/validation/validation.go (ValidatePositiveIntOrPercent, IsNotMoreThan100Percent)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (ValidateConditions)
 * @chapter 05-scheduler
 */

import {
  childPath,
  duplicate,
  type FieldError,
  GoValue,
  indexPath,
  invalid,
  notSupported,
  required,
} from "./field-errors.ts";
import { isSet, num, obj, str } from "./json.ts";
import type { KubeObject } from "./meta.ts";
import {
  validateLabelSelector,
  validateNonnegativeField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "./object-meta-validation.ts";
import { supportedUnhealthyPodEvictionPolicies } from "./policy.ts";
import { isValidPercent, nameIsDNSSubdomain } from "./string-validation.ts";

// #region validate-pdb-spec
/** ValidatePositiveIntOrPercent + IsNotMoreThan100Percent: `2`, or `"0%"` to `"100%"`. */
function validateIntOrPercent(value: unknown, path: string): FieldError[] {
  if (typeof value === "number") return validateNonnegativeField(value, path);
  if (typeof value !== "string") return [];
  const errors = isValidPercent(value).map((m) => invalid(path, value, m));
  if (errors.length === 0 && Number(value.slice(0, -1)) > 100) {
    errors.push(invalid(path, value, "must not be greater than 100%"));
  }
  return errors;
}

/** ValidatePodDisruptionBudgetSpec: one of the two bounds, each a count or a percentage. */
export function validatePodDisruptionBudgetSpec(spec: unknown, path = "spec"): FieldError[] {
  const s = obj(spec) ?? {};
  const errors: FieldError[] = [];
  if (isSet(s.minAvailable) && isSet(s.maxUnavailable)) {
    // Upstream prints the whole spec struct (Go's %#v, pointers as addresses); JSON stands in.
    errors.push(
      invalid(path, new GoValue(JSON.stringify(s), s), "minAvailable and maxUnavailable cannot be both set"),
    );
  }
  if (isSet(s.minAvailable))
    errors.push(...validateIntOrPercent(s.minAvailable, childPath(path, "minAvailable")));
  if (isSet(s.maxUnavailable)) {
    errors.push(...validateIntOrPercent(s.maxUnavailable, childPath(path, "maxUnavailable")));
  }
  errors.push(...validateLabelSelector(s.selector, childPath(path, "selector")));
  if (isSet(s.unhealthyPodEvictionPolicy)) {
    const policy = str(s.unhealthyPodEvictionPolicy);
    if (!(supportedUnhealthyPodEvictionPolicies as readonly string[]).includes(policy)) {
      errors.push(
        notSupported(
          childPath(path, "unhealthyPodEvictionPolicy"),
          policy,
          supportedUnhealthyPodEvictionPolicies,
        ),
      );
    }
  }
  return errors;
}
// #endregion validate-pdb-spec

export function validatePodDisruptionBudget(pdb: KubeObject): FieldError[] {
  return [
    ...validateObjectMeta(pdb.metadata, true, nameIsDNSSubdomain),
    ...validatePodDisruptionBudgetSpec(pdb.spec),
  ];
}

export function validatePodDisruptionBudgetUpdate(pdb: KubeObject, old: KubeObject): FieldError[] {
  return [
    ...validateObjectMetaUpdate(pdb.metadata, old.metadata),
    ...validatePodDisruptionBudgetSpec(pdb.spec),
  ];
}

/** ValidateConditions (meta/v1), the parts a controller can get wrong: type, status, reason. */
function validateConditions(conditions: unknown, path: string): FieldError[] {
  if (!Array.isArray(conditions)) return [];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const cond = obj(c) ?? {};
    const at = indexPath(path, i);
    const type = str(cond.type);
    if (seen.has(type)) errors.push(duplicate(childPath(at, "type"), type));
    seen.add(type);
    if (type === "") errors.push(required(childPath(at, "type"), "must be set"));
    const status = str(cond.status);
    if (!["True", "False", "Unknown"].includes(status)) {
      errors.push(notSupported(childPath(at, "status"), status, ["False", "True", "Unknown"]));
    }
    if (isSet(cond.observedGeneration)) {
      errors.push(
        ...validateNonnegativeField(num(cond.observedGeneration), childPath(at, "observedGeneration")),
      );
    }
    if (!isSet(cond.lastTransitionTime)) {
      errors.push(required(childPath(at, "lastTransitionTime"), "must be set"));
    }
    if (str(cond.reason) === "") errors.push(required(childPath(at, "reason"), "must be set"));
  });
  return errors;
}

// #region validate-pdb-status
/** ValidatePodDisruptionBudgetStatusUpdate (policy/v1): conditions well formed, counts never negative. */
export function validatePodDisruptionBudgetStatusUpdate(pdb: KubeObject, old: KubeObject): FieldError[] {
  const status = obj(pdb.status) ?? {};
  const errors = validateObjectMetaUpdate(pdb.metadata, old.metadata);
  errors.push(...validateConditions(status.conditions, "status.conditions"));
  for (const field of ["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"]) {
    errors.push(...validateNonnegativeField(num(status[field]), childPath("status", field)));
  }
  return errors;
}
// #endregion validate-pdb-status
