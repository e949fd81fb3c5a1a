/**
 * Affinity validation — a pod's `affinity`: node affinity (node selector terms over labels and
 * fields) and pod (anti-)affinity terms, required and preferred. Upstream does the same in
 * pkg/apis/core/validation/validation.go (validateAffinity).
 *
 * Solves:
 * - the scheduler's NodeAffinity and InterPodAffinity plugins (chapter 5) evaluate these terms on
 *   every scheduling attempt: an operator they do not know or a term with no topology key is
 *   refused when the pod is written.
 *
 * Invariants:
 * - a preferred term's weight is 1–100 (the scheduler adds weights to node scores);
 * - a node field selector may only select `metadata.name`.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (validateAffinity, validateNodeAffinity, ValidateNodeSelectorTerm, ValidateNodeSelectorRequirement, validateNodeFieldSelectorRequirement, validatePodAffinityTerm, validateWeightedPodAffinityTerms)
 * @chapter 02-apiserver
 */

import { childPath, type FieldError, indexPath, invalid, required } from "./field-errors.ts";
import { arr, type JSONObject, num, obj, str } from "./json.ts";
import {
  setOperatorValuesErrors,
  validateLabelName,
  validateLabelSelector,
} from "./object-meta-validation.ts";
import { isValidLabelValue, nameIsDNSLabel, nameIsDNSSubdomain } from "./string-validation.ts";

/**
 * ValidateNodeSelectorRequirement: the operator decides how many values make sense — some for
 * `In`/`NotIn`, none for `Exists`/`DoesNotExist`, exactly one number for `Gt`/`Lt`. Preferred
 * terms do not check the values as label values (`allowInvalidLabelValues`), as upstream.
 */
function validateNodeSelectorRequirement(
  requirement: JSONObject,
  path: string,
  allowInvalidLabelValues: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  const values = arr(requirement.values).map(String);
  const setErrors = setOperatorValuesErrors(requirement.operator, values, childPath(path, "values"));
  if (setErrors) errors.push(...setErrors);
  else if (requirement.operator === "Gt" || requirement.operator === "Lt") {
    if (values.length !== 1) {
      errors.push(
        required(childPath(path, "values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"),
      );
    }
  } else {
    errors.push(
      invalid(childPath(path, "operator"), str(requirement.operator), "not a valid selector operator"),
    );
  }
  errors.push(...validateLabelName(str(requirement.key), childPath(path, "key")));
  if (allowInvalidLabelValues) return errors;
  values.forEach((value, i) => {
    for (const m of isValidLabelValue(value))
      errors.push(invalid(indexPath(childPath(path, "values"), i), value, m));
  });
  return errors;
}

/**
 * ValidateNodeSelectorTerm: `matchExpressions` over node labels, and `matchFields` over node fields —
 * of which only `metadata.name` is selectable, with exactly one value.
 */
function validateNodeSelectorTerm(
  term: JSONObject,
  path: string,
  allowInvalidLabelValues: boolean,
): FieldError[] {
  const errors: FieldError[] = [];
  arr(term.matchExpressions).forEach((e, j) => {
    const at = indexPath(childPath(path, "matchExpressions"), j);
    errors.push(...validateNodeSelectorRequirement(obj(e) ?? {}, at, allowInvalidLabelValues));
  });
  arr(term.matchFields).forEach((e, j) => {
    const field = obj(e) ?? {};
    const at = indexPath(childPath(path, "matchFields"), j);
    const values = arr(field.values).map(String);
    if (field.operator === "In" || field.operator === "NotIn") {
      if (values.length !== 1) {
        errors.push(
          required(
            childPath(at, "values"),
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
          ),
        );
      }
    } else {
      errors.push(invalid(childPath(at, "operator"), str(field.operator), "not a valid selector operator"));
    }
    if (field.key !== "metadata.name")
      errors.push(invalid(childPath(at, "key"), str(field.key), "not a valid field selector key"));
    else {
      values.forEach((v, i) => {
        for (const m of nameIsDNSSubdomain(v, false))
          errors.push(invalid(indexPath(childPath(at, "values"), i), v, m));
      });
    }
  });
  return errors;
}

/**
 * validatePodAffinityTerm: which pods (selectors, namespaces) and the topology key that says what
 * "near" means (`kubernetes.io/hostname`, a zone label). A bad namespace is reported at
 * `namespace`, singular, as upstream does.
 */
function validatePodAffinityTerm(term: JSONObject, path: string): FieldError[] {
  const errors = validateLabelSelector(term.labelSelector, childPath(path, "labelSelector"));
  errors.push(...validateLabelSelector(term.namespaceSelector, childPath(path, "namespaceSelector")));
  for (const namespace of arr(term.namespaces).map(String)) {
    for (const m of nameIsDNSLabel(namespace, false))
      errors.push(invalid(childPath(path, "namespace"), namespace, m));
  }
  const topologyKey = str(term.topologyKey);
  if (topologyKey === "") errors.push(required(childPath(path, "topologyKey"), "can not be empty"));
  errors.push(...validateLabelName(topologyKey, childPath(path, "topologyKey")));
  return errors;
}

/** Required terms as they are; preferred ones wrap a term with a weight (validateWeightedPodAffinityTerms). */
function validatePodAffinityTerms(terms: unknown, weighted: boolean, path: string): FieldError[] {
  const errors: FieldError[] = [];
  arr(terms).forEach((entry, i) => {
    const term = obj(entry) ?? {};
    const at = indexPath(path, i);
    if (!weighted) {
      errors.push(...validatePodAffinityTerm(term, at));
      return;
    }
    const weight = num(term.weight);
    if (weight <= 0 || weight > 100)
      errors.push(invalid(childPath(at, "weight"), weight, "must be in the range 1-100"));
    errors.push(
      ...validatePodAffinityTerm(obj(term.podAffinityTerm) ?? {}, childPath(at, "podAffinityTerm")),
    );
  });
  return errors;
}

export function validateAffinity(affinity: unknown, path: string): FieldError[] {
  const a = obj(affinity);
  if (!a) return [];
  const errors: FieldError[] = [];
  const nodeAffinity = obj(a.nodeAffinity);
  if (nodeAffinity) {
    const at = childPath(path, "nodeAffinity");
    const requiredTerms = obj(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution);
    if (requiredTerms) {
      const termsPath = childPath(at, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms");
      const terms = arr(requiredTerms.nodeSelectorTerms);
      if (terms.length === 0) errors.push(required(termsPath, "must have at least one node selector term"));
      terms.forEach((t, i) => {
        errors.push(...validateNodeSelectorTerm(obj(t) ?? {}, indexPath(termsPath, i), false));
      });
    }
    arr(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution).forEach((entry, i) => {
      const term = obj(entry) ?? {};
      const termPath = indexPath(childPath(at, "preferredDuringSchedulingIgnoredDuringExecution"), i);
      const weight = num(term.weight);
      if (weight <= 0 || weight > 100)
        errors.push(invalid(childPath(termPath, "weight"), weight, "must be in the range 1-100"));
      // Upstream's ValidatePreferredSchedulingTerms does not check a preference's values as label
      // values; node names in matchFields it still checks.
      errors.push(
        ...validateNodeSelectorTerm(obj(term.preference) ?? {}, childPath(termPath, "preference"), true),
      );
    });
  }
  for (const kind of ["podAffinity", "podAntiAffinity"]) {
    const podAffinity = obj(a[kind]);
    if (!podAffinity) continue;
    const at = childPath(path, kind);
    errors.push(
      ...validatePodAffinityTerms(
        podAffinity.requiredDuringSchedulingIgnoredDuringExecution,
        false,
        childPath(at, "requiredDuringSchedulingIgnoredDuringExecution"),
      ),
    );
    errors.push(
      ...validatePodAffinityTerms(
        podAffinity.preferredDuringSchedulingIgnoredDuringExecution,
        true,
        childPath(at, "preferredDuringSchedulingIgnoredDuringExecution"),
      ),
    );
  }
  return errors;
}
