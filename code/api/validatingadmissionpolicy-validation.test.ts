import { describe, expect, it } from "vitest";
import { fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import {
  setDefaultsValidatingAdmissionPolicy,
  setDefaultsValidatingAdmissionPolicyBinding,
} from "./validatingadmissionpolicy.ts";
import {
  type ExpressionCompiler,
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
} from "./validatingadmissionpolicy-validation.ts";

/** A stand-in compiler: `bad` anywhere is a syntax error; records what it was asked. */
const asked: string[] = [];
const compiler: ExpressionCompiler = (expression, returns, opts) => {
  asked.push(`${returns}:${opts.hasParams}:${opts.variables.join(",")}:${expression}`);
  return expression.includes("bad") ? "compilation failed: ERROR: <input>:1:1: nope" : undefined;
};

const policy = (spec: Record<string, unknown>): KubeObject => {
  const p = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: "p.example.com" },
    spec,
  };
  setDefaultsValidatingAdmissionPolicy(p);
  return p;
};
const rules = {
  resourceRules: [
    { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE"], resources: ["deployments"] },
  ],
};
const errorsOf = (obj: KubeObject) =>
  validateValidatingAdmissionPolicy(obj, compiler).map(fieldErrorToString);

describe("ValidatingAdmissionPolicy validation", () => {
  it("checks auditAnnotations: a qualified `<policy>/<key>`, a value expression of string or null, unique keys", () => {
    asked.length = 0;
    const p = policy({
      matchConstraints: rules,
      auditAnnotations: [
        { key: "replicas", valueExpression: " 'x' " },
        { key: "bad key!", valueExpression: "" },
        { key: "replicas", valueExpression: "bad" },
      ],
    });
    expect(errorsOf(p)).toEqual([
      "spec.auditAnnotations[1].key: Invalid value: \"p.example.com/bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      "spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not specified",
      'spec.auditAnnotations[2].valueExpression: Invalid value: "bad": compilation failed: ERROR: <input>:1:1: nope',
      'spec.auditAnnotations[2].key: Duplicate value: "replicas"',
    ]);
    expect(asked).toEqual(["string-or-null:false::'x'", "string-or-null:false::bad"]);
  });

  it("accepts a defaulted policy, compiling each expression with what it may read", () => {
    asked.length = 0;
    const p = policy({
      paramKind: { apiVersion: "v1", kind: "ConfigMap" },
      matchConstraints: rules,
      matchConditions: [{ name: "c", expression: "true" }],
      variables: [
        { name: "a", expression: "1" },
        { name: "b", expression: "variables.a" },
      ],
      validations: [{ expression: "variables.b > 0", messageExpression: "'m'" }],
    });
    expect(errorsOf(p)).toEqual([]);
    expect(asked).toEqual([
      "bool:true::true",
      "any:true::1",
      "any:true:a:variables.a",
      "bool:true:a,b:variables.b > 0",
      "string:true:a,b:'m'",
    ]);
  });

  it("names the expression's field and the compiler's words", () => {
    const p = policy({
      matchConstraints: rules,
      validations: [{ expression: "ok" }, { expression: "bad <" }],
    });
    expect(errorsOf(p)).toEqual([
      'spec.validations[1].expression: Invalid value: "bad <": compilation failed: ERROR: <input>:1:1: nope',
    ]);
  });

  it("requires matchConstraints with a resource rule, validations, and known enum values", () => {
    expect(errorsOf(policy({}))).toEqual([
      "spec.matchConstraints: Required value",
      "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
      "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item",
    ]);
    const p = policy({
      failurePolicy: "Sometimes",
      matchConstraints: { resourceRules: [] },
      validations: [{ expression: "true", reason: "Teapot", message: "two\nlines" }],
      variables: [{ name: "not-an-identifier", expression: "1" }],
    });
    expect(errorsOf(p)).toEqual([
      'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
      "spec.matchConstraints.resourceRules: Required value",
      'spec.variables[0].name: Invalid value: "not-an-identifier": name is not a valid CEL identifier',
      'spec.validations[0].message: Invalid value: "two\\nlines": message must not contain line breaks',
      'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge", "Unauthorized"',
    ]);
  });
});

const binding = (spec: Record<string, unknown>): KubeObject => {
  const b = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: "b" },
    spec,
  };
  setDefaultsValidatingAdmissionPolicyBinding(b);
  return b;
};

describe("ValidatingAdmissionPolicyBinding validation", () => {
  it("requires a policy name and at least one action, and refuses Deny with Warn", () => {
    expect(validateValidatingAdmissionPolicyBinding(binding({})).map(fieldErrorToString)).toEqual([
      "spec.policyName: Required value",
      "spec.validationActions: Required value: at least one validation action is required",
    ]);
    expect(
      validateValidatingAdmissionPolicyBinding(
        binding({ policyName: "p", validationActions: ["Deny", "Warn", "Deny", "Log"] }),
      ).map(fieldErrorToString),
    ).toEqual([
      'spec.validationActions[2]: Duplicate value: "Deny"',
      'spec.validationActions[3]: Unsupported value: "Log": supported values: "Audit", "Deny", "Warn"',
      'spec.validationActions: Invalid value: []string{"Deny", "Warn", "Deny", "Log"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    ]);
  });

  it("paramRef: name xor selector, and parameterNotFoundAction required (v1 has no default)", () => {
    const errs = (paramRef: unknown) =>
      validateValidatingAdmissionPolicyBinding(
        binding({ policyName: "p", validationActions: ["Deny"], paramRef }),
      ).map(fieldErrorToString);
    expect(errs({ name: "x", parameterNotFoundAction: "Allow" })).toEqual([]);
    expect(errs({ name: "x" })).toEqual(["spec.paramRef.parameterNotFoundAction: Required value"]);
    expect(errs({ name: "x", selector: {}, parameterNotFoundAction: "Deny" })).toEqual([
      "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
      "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
    ]);
    expect(errs({ parameterNotFoundAction: "Deny" })).toEqual([
      "spec.paramRef: Required value: one of name or selector must be specified",
    ]);
  });
});
