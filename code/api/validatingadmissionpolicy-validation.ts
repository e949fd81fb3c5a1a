/**
 * Validation of ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding — including
 * compiling every CEL expression, so that a policy that could never run is refused at create
 * with a field error instead of failing every request it matches. Upstream: kubernetes
 * pkg/apis/admissionregistration/validation/validation.go.
 *
 * Solves:
 * - `object.spec.replicas <= ` is a syntax error: the author learns it from `kubectl apply`
 *   (`spec.validations[0].expression: Invalid value: "…": compilation failed: …`), not from a
 *   cluster where every Deployment create now fails;
 * - a binding must say what a failure does: validationActions is required, Deny and Warn together
 *   are refused (the same message twice serves no one).
 *
 * Invariants:
 * - the compiler is passed in (`ExpressionCompiler`): object types depend on no CEL library;
 *   the registry strategy hands in the API server's (admission/policy/cel.ts);
 * - a compile error is Invalid at the expression's path, its detail the compiler's text.
 *
 * @upstream kubernetes/kubernetes pkg/apis/admissionregistration/validation/validation.go (ValidateValidatingAdmissionPolicy, validateValidatingAdmissionPolicySpec, validateMatchResources, validateValidation, validateVariable, validateMatchCondition, validateParamKind, ValidateValidatingAdmissionPolicyBinding, validateParamRef, validateValidationActions)
 * @chapter 03-api-security
 */
import { validateRuleWithOperations } from "./admissionregistration-validation.ts";
import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  goStringSlice,
  indexPath,
  invalid,
  notSupported,
  required,
  tooMany,
} from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import { validateLabelSelector, validateObjectMeta } from "./object-meta-validation.ts";
import {
  isDNS1035Label,
  isDNS1123Subdomain,
  isQualifiedName,
  nameIsDNSSubdomain,
} from "./string-validation.ts";
import type {
  MatchResources,
  NamedRuleWithOperations,
  ParamRef,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  Validation,
} from "./validatingadmissionpolicy.ts";

/** What an expression must evaluate to (upstream: ExpressionAccessor.ReturnTypes). */
export type ExpressionReturn = "bool" | "string" | "string-or-null" | "any";

/** Compiles one expression; returns the error's detail (`compilation failed: …`), or undefined. */
export type ExpressionCompiler = (
  expression: string,
  returns: ExpressionReturn,
  opts: { hasParams: boolean; variables: readonly string[] },
) => string | undefined;

const supportedFailurePolicies = ["Fail", "Ignore"];
const supportedMatchPolicies = ["Equivalent", "Exact"];
const supportedReasons = ["Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"];
const validationActions = ["Audit", "Deny", "Warn"];
const celIdentifier = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

// #region match-resources
function validateNamedRule(rule: NamedRuleWithOperations, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  (rule.resourceNames ?? []).forEach((name, i) => {
    const p = indexPath(childPath(path, "resourceNames"), i);
    if (name === "." || name === ".." || name.includes("/") || name.includes("%"))
      errors.push(invalid(p, name, `may not contain '/' or '%' and may not be '.' or '..'`));
    if (seen.has(name)) errors.push(duplicate(p, name));
    seen.add(name);
  });
  return [...errors, ...validateRuleWithOperations(rule, path)];
}

function validateMatchResources(m: MatchResources | undefined, path: string): FieldError[] {
  if (!m) return [];
  const errors: FieldError[] = [];
  if (m.matchPolicy == null) errors.push(required(childPath(path, "matchPolicy")));
  else if (!supportedMatchPolicies.includes(m.matchPolicy))
    errors.push(notSupported(childPath(path, "matchPolicy"), m.matchPolicy, supportedMatchPolicies));
  if (m.namespaceSelector == null) errors.push(required(childPath(path, "namespaceSelector")));
  else errors.push(...validateLabelSelector(m.namespaceSelector, childPath(path, "namespaceSelector")));
  if (m.objectSelector == null) errors.push(required(childPath(path, "objectSelector")));
  else errors.push(...validateLabelSelector(m.objectSelector, childPath(path, "objectSelector")));
  (m.resourceRules ?? []).forEach((r, i) => {
    errors.push(...validateNamedRule(r, indexPath(childPath(path, "resourceRules"), i)));
  });
  (m.excludeResourceRules ?? []).forEach((r, i) => {
    errors.push(...validateNamedRule(r, indexPath(childPath(path, "excludeResourceRules"), i)));
  });
  return errors;
}
// #endregion match-resources

// #region policy
function validateValidation(
  v: Validation,
  compile: ExpressionCompiler,
  opts: { hasParams: boolean; variables: readonly string[] },
  path: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const expression = v.expression ?? "";
  if (expression.trim() === "")
    errors.push(required(childPath(path, "expression"), "expression is not specified"));
  else {
    const err = compile(expression, "bool", opts);
    if (err) errors.push(invalid(childPath(path, "expression"), expression, err));
  }
  const messageExpression = v.messageExpression ?? "";
  if (messageExpression.length > 0 && messageExpression.trim() === "")
    errors.push(
      invalid(childPath(path, "messageExpression"), messageExpression, "must be non-empty if specified"),
    );
  else if (messageExpression.trim() !== "") {
    const err = compile(messageExpression, "string", opts);
    if (err) errors.push(invalid(childPath(path, "messageExpression"), messageExpression, err));
  }
  const message = v.message ?? "";
  if (message.length > 0 && message.trim() === "")
    errors.push(invalid(childPath(path, "message"), message, "message must be non-empty if specified"));
  else if (/[\n\r]/.test(message.trim()))
    errors.push(invalid(childPath(path, "message"), message, "message must not contain line breaks"));
  if (v.reason != null && !supportedReasons.includes(v.reason))
    errors.push(notSupported(childPath(path, "reason"), v.reason, supportedReasons));
  return errors;
}

function validateParamKind(pk: { apiVersion?: string; kind?: string }, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const apiVersion = pk.apiVersion ?? "";
  if (apiVersion === "") errors.push(required(childPath(path, "apiVersion")));
  else {
    const parts = apiVersion.split("/");
    if (parts.length > 2)
      errors.push(
        invalid(childPath(path, "apiVersion"), apiVersion, `unexpected GroupVersion string: ${apiVersion}`),
      );
    else {
      const [group, version] = parts.length === 2 ? parts : ["", parts[0]];
      const groupErrs = group ? isDNS1123Subdomain(group) : [];
      if (groupErrs.length > 0)
        errors.push(invalid(childPath(path, "apiVersion"), group, groupErrs.join(",")));
      if (!version)
        errors.push(invalid(childPath(path, "apiVersion"), apiVersion, "version must be specified"));
      else {
        const vErrs = isDNS1035Label(version);
        if (vErrs.length > 0) errors.push(invalid(childPath(path, "apiVersion"), version, vErrs.join(",")));
      }
    }
  }
  const kind = pk.kind ?? "";
  if (kind === "") errors.push(required(childPath(path, "kind")));
  else {
    const kErrs = isDNS1035Label(kind.toLowerCase());
    if (kErrs.length > 0)
      errors.push(
        invalid(
          childPath(path, "kind"),
          kind,
          `may have mixed case, but should otherwise match: ${kErrs.join(",")}`,
        ),
      );
  }
  return errors;
}

export function validateValidatingAdmissionPolicy(
  obj: KubeObject,
  compile: ExpressionCompiler,
): FieldError[] {
  const errors = validateObjectMeta(obj.metadata, false, nameIsDNSSubdomain, "metadata", {
    kubeFinalizers: false,
  });
  const spec = (obj as ValidatingAdmissionPolicy).spec ?? {};
  const hasParams = spec.paramKind != null;
  if (spec.failurePolicy == null) errors.push(required("spec.failurePolicy"));
  else if (!supportedFailurePolicies.includes(spec.failurePolicy))
    errors.push(notSupported("spec.failurePolicy", spec.failurePolicy, supportedFailurePolicies));
  if (spec.paramKind) errors.push(...validateParamKind(spec.paramKind, "spec.paramKind"));
  if (!spec.matchConstraints) errors.push(required("spec.matchConstraints"));
  else {
    errors.push(...validateMatchResources(spec.matchConstraints, "spec.matchConstraints"));
    // At least one resource rule: upstream type-checks against the matched kinds.
    if ((spec.matchConstraints.resourceRules ?? []).length === 0)
      errors.push(required("spec.matchConstraints.resourceRules"));
  }
  const conditions = spec.matchConditions ?? [];
  if (conditions.length > 64) errors.push(tooMany("spec.matchConditions", conditions.length, 64));
  const conditionNames = new Set<string>();
  conditions.forEach((c, i) => {
    const path = indexPath("spec.matchConditions", i);
    const expression = (c.expression ?? "").trim();
    if (expression === "") errors.push(required(childPath(path, "expression")));
    else {
      const err = compile(expression, "bool", { hasParams, variables: [] });
      if (err) errors.push(invalid(childPath(path, "expression"), expression, err));
    }
    if (!c.name) errors.push(required(childPath(path, "name")));
    else {
      for (const e of isQualifiedName(c.name)) errors.push(invalid(childPath(path, "name"), c.name, e));
      if (conditionNames.has(c.name)) errors.push(duplicate(childPath(path, "name"), c.name));
      conditionNames.add(c.name);
    }
  });
  // Variables compose: each may use the ones before it.
  const declared: string[] = [];
  (spec.variables ?? []).forEach((v, i) => {
    const path = indexPath("spec.variables", i);
    if (!v.name || v.name.trim() === "")
      errors.push(required(childPath(path, "name"), "name is not specified"));
    else if (!celIdentifier.test(v.name))
      errors.push(invalid(childPath(path, "name"), v.name, "name is not a valid CEL identifier"));
    if (!v.expression || v.expression.trim() === "")
      errors.push(required(childPath(path, "expression"), "expression is not specified"));
    else {
      const err = compile(v.expression, "any", { hasParams, variables: declared });
      if (err) errors.push(invalid(childPath(path, "expression"), v.expression, err));
    }
    if (v.name) declared.push(v.name);
  });
  const validations = spec.validations ?? [];
  if (validations.length === 0 && (spec.auditAnnotations ?? []).length === 0) {
    const detail = "validations or auditAnnotations must contain at least one item";
    errors.push(required("spec.validations", detail), required("spec.auditAnnotations", detail));
  }
  validations.forEach((v, i) => {
    errors.push(
      ...validateValidation(v, compile, { hasParams, variables: declared }, indexPath("spec.validations", i)),
    );
  });
  errors.push(
    ...validateAuditAnnotations(obj.metadata?.name ?? "", spec, compile, { hasParams, variables: declared }),
  );
  return errors;
}

const maxAuditAnnotations = 20;
const maxAuditAnnotationValueExpressionLength = 5 * 1024;

function validateAuditAnnotations(
  policyName: string,
  spec: ValidatingAdmissionPolicy["spec"],
  compile: ExpressionCompiler,
  opts: { hasParams: boolean; variables: readonly string[] },
): FieldError[] {
  const list = spec.auditAnnotations ?? [];
  const errors: FieldError[] = [];
  if (list.length > maxAuditAnnotations)
    errors.push(
      invalid(
        "spec.auditAnnotations",
        list,
        `must not have more than ${maxAuditAnnotations} auditAnnotations`,
      ),
    );
  const keys = new Set<string>();
  list.forEach((a, i) => {
    const path = indexPath("spec.auditAnnotations", i);
    const key = a.key ?? "";
    // The key is recorded as `<policy>/<key>`: that whole string must be a qualified name.
    if (policyName) {
      for (const e of isQualifiedName(`${policyName}/${key}`))
        errors.push(invalid(childPath(path, "key"), `${policyName}/${key}`, e));
    } else errors.push(invalid(childPath(path, "key"), key, "requires metadata.name be non-empty"));
    const expression = (a.valueExpression ?? "").trim();
    if (expression === "")
      errors.push(required(childPath(path, "valueExpression"), "valueExpression is not specified"));
    else if (expression.length > maxAuditAnnotationValueExpressionLength)
      errors.push(
        required(
          childPath(path, "valueExpression"),
          `must not exceed ${maxAuditAnnotationValueExpressionLength} bytes in length`,
        ),
      );
    else {
      const err = compile(expression, "string-or-null", opts);
      if (err) errors.push(invalid(childPath(path, "valueExpression"), a.valueExpression, err));
    }
    if (keys.has(key)) errors.push(duplicate(childPath(path, "key"), key));
    keys.add(key);
  });
  return errors;
}
// #endregion policy

// #region binding
function validateParamRef(pr: ParamRef | undefined, path: string): FieldError[] {
  if (!pr) return [];
  const errors: FieldError[] = [];
  if (pr.name) {
    if (pr.name === "." || pr.name === ".." || pr.name.includes("/") || pr.name.includes("%"))
      errors.push(
        invalid(childPath(path, "name"), pr.name, `may not contain '/' or '%' and may not be '.' or '..'`),
      );
    if (pr.selector)
      errors.push(forbidden(childPath(path, "name"), "name and selector are mutually exclusive"));
  }
  if (pr.selector) {
    errors.push(...validateLabelSelector(pr.selector, childPath(path, "selector")));
    if (pr.name)
      errors.push(forbidden(childPath(path, "selector"), "name and selector are mutually exclusive"));
  }
  if (!pr.name && !pr.selector) errors.push(required(path, "one of name or selector must be specified"));
  if (!pr.parameterNotFoundAction) errors.push(required(childPath(path, "parameterNotFoundAction")));
  else if (pr.parameterNotFoundAction !== "Deny" && pr.parameterNotFoundAction !== "Allow")
    errors.push(
      notSupported(childPath(path, "parameterNotFoundAction"), pr.parameterNotFoundAction, ["Deny", "Allow"]),
    );
  return errors;
}

function validateValidationActions(actions: readonly string[] | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  (actions ?? []).forEach((a, i) => {
    if (!validationActions.includes(a)) errors.push(notSupported(indexPath(path, i), a, validationActions));
    if (seen.has(a)) errors.push(duplicate(indexPath(path, i), a));
    seen.add(a);
  });
  if (seen.has("Deny") && seen.has("Warn"))
    errors.push(
      invalid(
        path,
        goStringSlice(actions ?? []),
        "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
      ),
    );
  if (seen.size === 0) errors.push(required(path, "at least one validation action is required"));
  return errors;
}

export function validateValidatingAdmissionPolicyBinding(obj: KubeObject): FieldError[] {
  const errors = validateObjectMeta(obj.metadata, false, nameIsDNSSubdomain, "metadata", {
    kubeFinalizers: false,
  });
  const spec =
    (obj as ValidatingAdmissionPolicyBinding).spec ?? ({} as ValidatingAdmissionPolicyBinding["spec"]);
  if (!spec.policyName) errors.push(required("spec.policyName"));
  else
    for (const e of nameIsDNSSubdomain(spec.policyName, false))
      errors.push(invalid("spec.policyName", spec.policyName, e));
  errors.push(...validateParamRef(spec.paramRef, "spec.paramRef"));
  errors.push(...validateMatchResources(spec.matchResources, "spec.matchResources"));
  errors.push(...validateValidationActions(spec.validationActions, "spec.validationActions"));
  return errors;
}
// #endregion binding
