/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding (group
 * admissionregistration.k8s.io, version v1, GA in 1.30) — admission rules written as CEL
 * expressions and evaluated inside the API server, with no webhook to run. Upstream: k8s.io/api's
 * admissionregistration/v1/types.go, with the defaults of kubernetes
 * pkg/apis/admissionregistration/v1/defaults.go.
 *
 * Solves:
 * - a policy ("no Deployment with more than 5 replicas") is one object the API server reads and
 *   compiles, not a service to deploy, certify and keep up: nothing can time out, nothing to call;
 * - the policy says *what* is checked; a binding says *where* (matchResources), *with which
 *   parameters* (paramRef) and *what a failure does* (validationActions: Deny, Warn, Audit), so
 *   one policy can be rolled out as Warn in one place and Deny in another.
 *
 * Invariants (after defaulting):
 * - a policy has failurePolicy (Fail); its matchConstraints (and a binding's matchResources, when
 *   given) have matchPolicy (Equivalent), namespaceSelector and objectSelector (`{}`), and every
 *   rule a scope (`*`);
 * - a binding with no policy of its name, or a policy with no binding, judges nothing.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/admissionregistration/v1/types.go (ValidatingAdmissionPolicy, ValidatingAdmissionPolicySpec, Validation, Variable, MatchResources, NamedRuleWithOperations, ParamKind, ParamRef, ValidatingAdmissionPolicyBinding, ValidationAction)
 * @upstream kubernetes/kubernetes pkg/apis/admissionregistration/v1/defaults.go (SetDefaults_ValidatingAdmissionPolicySpec, SetDefaults_MatchResources)
 * @chapter 03-api-security
 */
import type { FailurePolicyType, MatchPolicyType, RuleWithOperations } from "./admissionregistration.ts";
import type { LabelSelector } from "./labels.ts";
import type { KubeObject } from "./meta.ts";

// #region types
/** A rule plus, optionally, the names of the objects it covers (empty: every name). */
export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

export interface MatchResources {
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  resourceRules?: NamedRuleWithOperations[];
  /** Checked first: a request matching one of these is never judged, whatever resourceRules say. */
  excludeResourceRules?: NamedRuleWithOperations[];
  matchPolicy?: MatchPolicyType;
}

export interface Validation {
  /** CEL, must evaluate to bool: true admits, false fails the validation. */
  expression: string;
  message?: string;
  /** CEL, must evaluate to string: the failure message (wins over `message` when it works). */
  messageExpression?: string;
  /** Unauthorized, Forbidden, Invalid (the default) or RequestEntityTooLarge: the Status reason. */
  reason?: string;
}

/** A named CEL expression, read by later ones as `variables.<name>`. */
export interface Variable {
  name: string;
  expression: string;
}

export interface MatchCondition {
  name: string;
  expression: string;
}

export interface ParamKind {
  apiVersion: string;
  kind: string;
}

export interface ValidatingAdmissionPolicySpec {
  paramKind?: ParamKind;
  matchConstraints?: MatchResources;
  validations?: Validation[];
  failurePolicy?: FailurePolicyType;
  auditAnnotations?: { key: string; valueExpression: string }[];
  matchConditions?: MatchCondition[];
  variables?: Variable[];
}

export interface ValidatingAdmissionPolicy extends KubeObject {
  spec: ValidatingAdmissionPolicySpec;
}

export type ValidationAction = "Deny" | "Warn" | "Audit";
export type ParameterNotFoundActionType = "Allow" | "Deny";

export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelector;
  parameterNotFoundAction?: ParameterNotFoundActionType;
}

export interface ValidatingAdmissionPolicyBindingSpec {
  policyName: string;
  paramRef?: ParamRef;
  /** Narrows the policy's matchConstraints: both must match. */
  matchResources?: MatchResources;
  validationActions?: ValidationAction[];
}

export interface ValidatingAdmissionPolicyBinding extends KubeObject {
  spec: ValidatingAdmissionPolicyBindingSpec;
}
// #endregion types

// #region defaults
function setDefaultsMatchResources(m: MatchResources): void {
  m.matchPolicy ??= "Equivalent";
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const rule of [...(m.resourceRules ?? []), ...(m.excludeResourceRules ?? [])]) rule.scope ??= "*";
}

export function setDefaultsValidatingAdmissionPolicy(obj: KubeObject): void {
  const spec = (obj as ValidatingAdmissionPolicy).spec;
  if (!spec) return;
  spec.failurePolicy ??= "Fail";
  if (spec.matchConstraints) setDefaultsMatchResources(spec.matchConstraints);
}

export function setDefaultsValidatingAdmissionPolicyBinding(obj: KubeObject): void {
  const spec = (obj as ValidatingAdmissionPolicyBinding).spec;
  // v1 has no SetDefaults_ParamRef (v1alpha1 had one): parameterNotFoundAction is required.
  if (spec?.matchResources) setDefaultsMatchResources(spec.matchResources);
}
// #endregion defaults
