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

/** One audit annotation's result (upstream: PolicyAuditAnnotation). */
export interface PolicyAuditAnnotation {
  action: "publish" | "exclude" | "error";
  key: string;
  value?: string;
  error?: string;
}

export interface ValidateResult {
  decisions: PolicyDecision[];
  auditAnnotations: PolicyAuditAnnotation[];
}

const maxEvaluatedMessageExpressionSizeBytes = 5 * 1024;
const maxAuditAnnotationValueLength = 10 * 1024;

/** The CEL type name of a value, for the unsupported-return-type error. */
function celTypeOf(v: unknown): string {
  if (typeof v === "bigint") return "int";
  if (typeof v === "number") return "double";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "list";
  return "map";
}

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
): ValidateResult {
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
    if (result === false) return { decisions: [], auditAnnotations: [] }; // the policy does not apply
  }
  if (errors.length > 0) {
    if (failurePolicy === "Ignore") return { decisions: [], auditAnnotations: [] };
    // Go's utilerrors.NewAggregate: one error reads as itself, several as a list.
    const message = errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
    return { decisions: [{ action: "deny", evaluation: "error", message }], auditAnnotations: [] };
  }

  const decisions = compiled.validations.map(({ validation, program, message }): PolicyDecision => {
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
  return { decisions, auditAnnotations: evaluateAuditAnnotations(compiled, failurePolicy, activation) };
}
// #endregion validate

// #region audit-annotations
/** A string is published (trimmed, at most 10 KiB), null or blank excluded, anything else an error. */
function evaluateAuditAnnotations(
  compiled: CompiledPolicy,
  failurePolicy: FailurePolicyType | undefined,
  activation: Record<string, unknown>,
): PolicyAuditAnnotation[] {
  const onError = failurePolicy === "Ignore" ? "exclude" : "error";
  return compiled.auditAnnotations.map(({ key, program }): PolicyAuditAnnotation => {
    let value: unknown;
    try {
      value = program.run(activation);
    } catch (e) {
      return { action: onError, key, error: messageOf(e) };
    }
    if (value === null) return { action: "exclude", key };
    if (typeof value !== "string") {
      return {
        action: onError,
        key,
        error: `valueExpression '${program.expression}' resulted in unsupported return type: ${celTypeOf(value)}. Return type must be either string or null.`,
      };
    }
    const trimmed = value.trim();
    if (trimmed === "") return { action: "exclude", key };
    return { action: "publish", key, value: trimmed.slice(0, maxAuditAnnotationValueLength) };
  });
}
// #endregion audit-annotations

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
