import { describe, expect, it } from "vitest";
import type {
  ValidatingAdmissionPolicyBinding,
  ValidationAction,
} from "../../../code/api/validatingadmissionpolicy.ts";
import { outcome } from "./validation-actions.ts";

const key = "validation.policy.admission.k8s.io/validation_failure";

const binding = (validationActions: ValidationAction[]): ValidatingAdmissionPolicyBinding => ({
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicyBinding",
  metadata: { name: "demo-binding" },
  spec: { policyName: "demo-policy.example.com", validationActions },
});

const tooMany = { message: "replicas must be no greater than 5", expressionIndex: 0 };
const noTeam = { message: "every deployment needs a team label", expressionIndex: 2 };

describe("Deny", () => {
  it("refuses with upstream's message, naming the policy and the binding", () => {
    expect(outcome("demo-policy.example.com", binding(["Deny"]), [tooMany])).toEqual({
      denials: [
        "ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding' denied request: replicas must be no greater than 5",
      ],
      warnings: [],
      annotations: {},
    });
  });

  it("does nothing when nothing failed", () => {
    expect(outcome("demo-policy.example.com", binding(["Deny", "Audit"]), [])).toEqual({
      denials: [],
      warnings: [],
      annotations: {},
    });
  });
});

describe("Warn", () => {
  it("admits, with one warning per failure, in order", () => {
    const r = outcome("demo-policy.example.com", binding(["Warn"]), [tooMany, noTeam]);
    expect(r.denials).toEqual([]);
    expect(r.warnings).toEqual([
      "Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding': replicas must be no greater than 5",
      "Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding': every deployment needs a team label",
    ]);
  });
});

describe("Audit", () => {
  it("admits and records the first failure as a JSON list, with its expression's index", () => {
    const r = outcome("demo-policy.example.com", binding(["Audit"]), [noTeam, tooMany]);
    expect([r.denials, r.warnings]).toEqual([[], []]);
    expect(JSON.parse(r.annotations[key])).toEqual([
      {
        message: "every deployment needs a team label",
        policy: "demo-policy.example.com",
        binding: "demo-binding",
        expressionIndex: 2,
        validationActions: ["Audit"],
      },
    ]);
  });

  it("writes the fields in upstream's order (the audit log shows the JSON as written)", () => {
    const r = outcome("demo-policy.example.com", binding(["Audit"]), [tooMany]);
    expect(r.annotations[key]).toBe(
      '[{"message":"replicas must be no greater than 5","policy":"demo-policy.example.com","binding":"demo-binding","expressionIndex":0,"validationActions":["Audit"]}]',
    );
  });
});

describe("several actions", () => {
  it("Deny and Audit: refuses and records", () => {
    const r = outcome("demo-policy.example.com", binding(["Deny", "Audit"]), [tooMany]);
    expect(r.denials).toHaveLength(1);
    expect(JSON.parse(r.annotations[key])[0].validationActions).toEqual(["Deny", "Audit"]);
  });

  it("Warn and Audit: warns and records, refuses nothing", () => {
    const r = outcome("demo-policy.example.com", binding(["Audit", "Warn"]), [tooMany]);
    expect([r.denials.length, r.warnings.length, Object.keys(r.annotations)]).toEqual([0, 1, [key]]);
  });
});
