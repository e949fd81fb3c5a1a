/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding strategies: cluster-scoped, a
 * generation that counts spec changes, and validation that compiles every CEL expression.
 * Upstream: kubernetes pkg/registry/admissionregistration/validatingadmissionpolicy/strategy.go
 * and validatingadmissionpolicybinding/strategy.go.
 *
 * Solves:
 * - a bad expression is refused when the policy is written (422 with
 *   `spec.validations[0].expression: Invalid value: …: compilation failed: …`): the validation
 *   of code/api is handed the API server's CEL compiler (admission/policy/cel.ts), because
 *   object types may not depend on the API server;
 * - `status` belongs to the API server's type checker (upstream's status subresource): a write
 *   to the policy cannot set it.
 *
 * Invariants: a new object has generation 1 and (a policy) no status; an update bumps the
 * generation exactly when `spec` changed, and keeps the stored status.
 *
 * What upstream does differently: creating or updating a binding whose paramRef names a kind
 * also checks that the requester may `get` those params (validatingadmissionpolicybinding/authz.go);
 * and a policy's status carries type-checking warnings; neither is built here.
 *
 * @upstream kubernetes/kubernetes pkg/registry/admissionregistration/validatingadmissionpolicy/strategy.go (validatingAdmissionPolicyStrategy: PrepareForCreate, PrepareForUpdate, Validate, ValidateUpdate)
 * @upstream kubernetes/kubernetes pkg/registry/admissionregistration/validatingadmissionpolicybinding/strategy.go (validatingAdmissionPolicyBindingStrategy)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import { validateObjectMetaUpdate } from "../../../api/object-meta-validation.ts";
import {
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
} from "../../../api/validatingadmissionpolicy-validation.ts";
import { compileForValidation } from "../../admission/policy/cel.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, keepFromOld, semanticDeepEqual } from "./helpers.ts";

// #region generation
function bumpGenerationOnSpecChange(obj: KubeObject, old: KubeObject): void {
  const oldGeneration = old.metadata.generation ?? 0;
  obj.metadata.generation = semanticDeepEqual(obj.spec, old.spec) ? oldGeneration : oldGeneration + 1;
}
// #endregion generation

const metaUpdate = (obj: KubeObject, old: KubeObject) =>
  validateObjectMetaUpdate(obj.metadata, old.metadata, "metadata", { kubeFinalizers: false });

export const validatingAdmissionPolicyStrategy: RESTStrategy = {
  ...baseStrategy(false),
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
    delete (obj as { status?: unknown }).status;
  },
  prepareForUpdate(obj, old) {
    keepFromOld(obj as Record<string, unknown>, old as Record<string, unknown>, "status");
    bumpGenerationOnSpecChange(obj, old);
  },
  // #region validate
  validate: (obj) => validateValidatingAdmissionPolicy(obj, compileForValidation),
  validateUpdate: (obj, old) => [
    ...metaUpdate(obj, old),
    ...validateValidatingAdmissionPolicy(obj, compileForValidation),
  ],
  // #endregion validate
};

export const validatingAdmissionPolicyBindingStrategy: RESTStrategy = {
  ...baseStrategy(false),
  prepareForCreate(obj) {
    obj.metadata.generation = 1;
  },
  prepareForUpdate: bumpGenerationOnSpecChange,
  validate: (obj) => validateValidatingAdmissionPolicyBinding(obj),
  validateUpdate: (obj, old) => [...metaUpdate(obj, old), ...validateValidatingAdmissionPolicyBinding(obj)],
};
