// The reference answer. The course's plugin does the same in
// code/apiserver/admission/policy/validating.ts (regions validation-actions and denial), for every
// request a ValidatingAdmissionPolicy judges.
//
// A recorded mistake next to this file (wrong-*.ts) is this answer with one part done wrong: it
// builds its outcome with `outcomeWith({ ...reference, <part> })`.
import type { ValidatingAdmissionPolicyBinding } from "../../../code/api/validatingadmissionpolicy.ts";

export interface Failure {
  message: string;
  expressionIndex: number;
}

export interface Outcome {
  denials: string[];
  warnings: string[];
  annotations: Record<string, string>;
}

export const validationFailureKey = "validation.policy.admission.k8s.io/validation_failure";

export interface Parts {
  /** The actions to carry out for one failure. */
  actions(binding: ValidatingAdmissionPolicyBinding): readonly string[];
  denial(policyName: string, bindingName: string, message: string): string;
  warning(policyName: string, bindingName: string, message: string): string;
  /** Records the failure's annotation value; the first value of a key is kept. */
  audit(annotations: Record<string, string>, value: string): void;
}

export const reference: Parts = {
  actions: (binding) => binding.spec.validationActions ?? [],
  denial: (policy, binding, message) =>
    `ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${message}`,
  warning: (policy, binding, message) =>
    `Validation failed for ValidatingAdmissionPolicy '${policy}' with binding '${binding}': ${message}`,
  audit: (annotations, value) => {
    if (annotations[validationFailureKey] === undefined) annotations[validationFailureKey] = value;
  },
};

export function outcomeWith(parts: Parts) {
  return (
    policyName: string,
    binding: ValidatingAdmissionPolicyBinding,
    failures: readonly Failure[],
  ): Outcome => {
    const result: Outcome = { denials: [], warnings: [], annotations: {} };
    const bindingName = binding.metadata.name ?? "";
    for (const f of failures) {
      for (const action of parts.actions(binding)) {
        if (action === "Deny") result.denials.push(parts.denial(policyName, bindingName, f.message));
        else if (action === "Warn") result.warnings.push(parts.warning(policyName, bindingName, f.message));
        else if (action === "Audit") {
          const value = JSON.stringify([
            {
              message: f.message,
              policy: binding.spec.policyName,
              binding: bindingName,
              expressionIndex: f.expressionIndex,
              validationActions: binding.spec.validationActions,
            },
          ]);
          parts.audit(result.annotations, value);
        }
      }
    }
    return result;
  };
}

export const outcome = outcomeWith(reference);
