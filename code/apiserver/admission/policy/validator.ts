/**
 * The validator — one compiled policy, one request, one param: the match conditions, then each
 * validation, each turned into a decision (admit, or deny with a message and a reason). Upstream:
 * k8s.io/apiserver pkg/admission/plugin/policy/validating/validator.go (validator.Validate) and
 * policy_decision.go.
 *
 * Solves:
 * - an expression that cannot be evaluated (`no such key: replicas`) is not a "no": it is an
 *   error, and the policy's failurePolicy says whether errors deny (Fail) or admit (Ignore);
 * - a failed validation explains itself: messageExpression's result if it gives a usable
 *   string, else `message`, else `failed expression: <expression>` — a denial is never silent.
 *
 * Invariants:
 * - a match condition that is false means "this policy does not apply": no decisions at all;
 *   errors in conditions that are otherwise all true follow failurePolicy;
 * - a validation denies unless it evaluates to exactly `true`;
 * - a messageExpression result is used only if it is a string, non-blank, at most 5 KiB and on
 *   one line; its errors never change the decision;
 * - decision i belongs to validation i (the audit annotation's expressionIndex).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/validator.go (validator.Validate, policyDecisionActionForError)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating/policy_decision.go (PolicyDecision, reasonToCode)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/apis/cel/config.go (MaxEvaluatedMessageExpressionSizeBytes)
 * @chapter 03-api-security
 */
import type { FailurePolicyType } from "../../../api/admissionregistration.ts";
import { type ActivationInput, newActivation } from "./cel.ts";
import type { CompiledPolicy } from "./source.ts";

export type PolicyDecisionAction = "admit" | "deny";
export type PolicyDecisionEvaluation = "admit" | "deny" | "error";

export interface PolicyDecision {
  action: PolicyDecisionAction;
  evaluation: PolicyDecisionEvaluation;
  message: string;
  /** The Status reason of a denial (default Invalid). */
  reason?: string;
}

const maxEvaluatedMessageExpressionSizeBytes = 5 * 1024;

const actionForError = (f: FailurePolicyType | undefined): PolicyDecisionAction =>
  f === "Ignore" ? "admit" : "deny";

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// #region validate
export function validatePolicy(
  compiled: CompiledPolicy,
  failurePolicy: FailurePolicyType | undefined,
  input: ActivationInput,
): PolicyDecision[] {
  const activation = newActivation(input, compiled.variables);
  const errors: string[] = [];
  for (const c of compiled.matchConditions) {
    let result: unknown;
    try {
      result = c.program.run(activation);
    } catch (e) {
      errors.push(messageOf(e));
      continue;
    }
    if (result === false) return []; // the policy does not apply
  }
  if (errors.length > 0) {
    if (failurePolicy === "Ignore") return [];
    // Go's utilerrors.NewAggregate: one error reads as itself, several as a list.
    const message = errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
    return [{ action: "deny", evaluation: "error", message }];
  }

  return compiled.validations.map(({ validation, program, message }): PolicyDecision => {
    let result: unknown;
    try {
      result = program.run(activation);
    } catch (e) {
      return { action: actionForError(failurePolicy), evaluation: "error", message: messageOf(e) };
    }
    if (result === true) return { action: "admit", evaluation: "admit", message: "" };
    let text = "";
    if (message) {
      try {
        const value = message.run(activation);
        if (typeof value === "string") {
          text = value.trim();
          if (Buffer.byteLength(text) > maxEvaluatedMessageExpressionSizeBytes || text.includes("\n"))
            text = "";
        }
      } catch {
        // upstream logs a failing messageExpression and falls back
      }
    }
    if (text === "" && validation.message) text = validation.message.trim();
    if (text === "") text = `failed expression: ${validation.expression.trim()}`;
    return { action: "deny", evaluation: "deny", message: text, reason: validation.reason ?? "Invalid" };
  });
}
// #endregion validate

// #region reason-to-code
/** reasonToCode: the HTTP code of the Status a denial with this reason becomes. */
export function reasonToCode(reason: string): number {
  switch (reason) {
    case "Forbidden":
      return 403;
    case "Unauthorized":
      return 401;
    case "RequestEntityTooLarge":
      return 413;
    default:
      return 422; // Invalid, and anything validation would not have let through
  }
}
// #endregion reason-to-code
