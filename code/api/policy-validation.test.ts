// PodDisruptionBudget validation: upstream's messages for the two bounds, percentages, the
// eviction policy enum, the selector, and the status counts.
import { describe, expect, it } from "vitest";
import { fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import { validatePodDisruptionBudget, validatePodDisruptionBudgetStatusUpdate } from "./policy-validation.ts";

const pdb = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: "policy/v1",
  kind: "PodDisruptionBudget",
  metadata: { name: "web", namespace: "default", resourceVersion: "1" },
  spec,
  ...(status ? { status } : {}),
});
const messages = (o: KubeObject) => validatePodDisruptionBudget(o).map(fieldErrorToString);

describe("validatePodDisruptionBudget", () => {
  it("accepts a count, a percentage, or neither bound", () => {
    expect(messages(pdb({ minAvailable: 2, selector: { matchLabels: { app: "web" } } }))).toEqual([]);
    expect(messages(pdb({ maxUnavailable: "100%" }))).toEqual([]);
    expect(messages(pdb({}))).toEqual([]);
  });

  it("refuses both bounds at once", () => {
    const errs = messages(pdb({ minAvailable: 1, maxUnavailable: 1 }));
    expect(errs).toHaveLength(1);
    expect(errs[0]).toMatch(/^spec: Invalid value: .*: minAvailable and maxUnavailable cannot be both set$/);
  });

  it("refuses negative counts, malformed percentages and more than 100%", () => {
    expect(messages(pdb({ minAvailable: -1 }))).toEqual([
      "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
    ]);
    expect(messages(pdb({ maxUnavailable: "150%" }))).toEqual([
      'spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
    ]);
    expect(messages(pdb({ minAvailable: "half" }))).toEqual([
      `spec.minAvailable: Invalid value: "half": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
    ]);
  });

  it("refuses an unknown eviction policy and a bad selector", () => {
    expect(messages(pdb({ unhealthyPodEvictionPolicy: "Sometimes" }))).toEqual([
      'spec.unhealthyPodEvictionPolicy: Unsupported value: "Sometimes": supported values: "AlwaysAllow", "IfHealthyBudget"',
    ]);
    expect(messages(pdb({ selector: { matchLabels: { "bad key!": "x" } } }))[0]).toMatch(
      /^spec\.selector\.matchLabels: Invalid value: "bad key!": name part must consist of/,
    );
  });
});

describe("validatePodDisruptionBudgetStatusUpdate", () => {
  const old = pdb(
    { minAvailable: 1 },
    { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
  );
  const status = (s: Record<string, unknown>) =>
    validatePodDisruptionBudgetStatusUpdate(pdb({ minAvailable: 1 }, s), old).map(fieldErrorToString);

  it("refuses negative counts and a condition without a reason", () => {
    expect(status({ disruptionsAllowed: -1, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 })).toEqual(
      ["status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"],
    );
    expect(
      status({
        disruptionsAllowed: 0,
        currentHealthy: 0,
        desiredHealthy: 0,
        expectedPods: 0,
        conditions: [
          {
            type: "DisruptionAllowed",
            status: "Maybe",
            lastTransitionTime: "2024-01-01T00:00:00Z",
            reason: "",
          },
        ],
      }),
    ).toEqual([
      'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
      "status.conditions[0].reason: Required value: must be set",
    ]);
  });
});
