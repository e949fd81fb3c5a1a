/**
 * Exercise: ValidatingAdmissionPolicy's validationActions — what one binding does with the
 * validations that failed: refuse (Deny), tell the client (Warn), tell the audit log (Audit).
 * README.md has the rules and the exact messages.
 */
import type { ValidatingAdmissionPolicyBinding } from "../../../code/api/validatingadmissionpolicy.ts";

/** One validation that did not pass: its message and its index in `spec.validations`. */
export interface Failure {
  message: string;
  expressionIndex: number;
}

/** What the request gets from one binding's failures. */
export interface Outcome {
  /** The denial messages, in order (the plugin refuses with the first); empty: nothing refused. */
  denials: string[];
  /** The `Warning:` lines kubectl prints, in order. */
  warnings: string[];
  /** Audit annotations to add to the request's audit event. */
  annotations: Record<string, string>;
}

export function outcome(
  policyName: string,
  binding: ValidatingAdmissionPolicyBinding,
  failures: readonly Failure[],
): Outcome {
  throw new Error(
    `TODO: outcome — ${failures.length} failure(s) of ${policyName} under actions ${JSON.stringify(binding.spec.validationActions)}`,
  );
}
