import { describe, expect, it } from "vitest";
import { setDefaults } from "./defaults.ts";
import { fieldErrorToString } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import { validatePriorityClass, validatePriorityClassUpdate } from "./scheduling-validation.ts";

// Expected texts follow Kubernetes v1.32's pkg/apis/scheduling/validation/validation.go and
// pkg/apis/scheduling/v1/helpers.go (IsKnownSystemPriorityClass).

const priorityClass = (name: string, value: number, extra: Record<string, unknown> = {}): KubeObject => {
  const pc: KubeObject = {
    apiVersion: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    metadata: { name },
    value,
    ...extra,
  };
  setDefaults(pc);
  return pc;
};

describe("PriorityClass", () => {
  it.each<[string, KubeObject, string[]]>([
    ["user class at the cap", priorityClass("high", 1_000_000_000), []],
    [
      "user class above the cap",
      priorityClass("too-high", 1_000_000_001),
      ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"],
    ],
    ["the built-in system-node-critical", priorityClass("system-node-critical", 2_000_001_000), []],
    [
      "system- prefix on an unknown class",
      priorityClass("system-mine", 5),
      [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
      ],
    ],
    [
      "a system class with the wrong value",
      priorityClass("system-cluster-critical", 1),
      [
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000",
      ],
    ],
    [
      "unknown preemption policy",
      priorityClass("low", 1, { preemptionPolicy: "Sometimes" }),
      ['preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"'],
    ],
    [
      "namespaced",
      priorityClass("x", 1, { metadata: { name: "x", namespace: "d" } }),
      ["metadata.namespace: Forbidden: not allowed on this type"],
    ],
  ])("%s", (_name, pc, expected) => {
    expect(validatePriorityClass(pc).map(fieldErrorToString)).toEqual(expected);
  });

  it("value and preemption policy are frozen", () => {
    const old = priorityClass("high", 1000, { metadata: { name: "high", resourceVersion: "2" } });
    const changed = { ...old, value: 2000, preemptionPolicy: "Never", description: "new text" };
    expect(validatePriorityClassUpdate(changed, old).map(fieldErrorToString)).toEqual([
      "value: Forbidden: may not be changed in an update.",
      'preemptionPolicy: Invalid value: "Never": field is immutable',
    ]);
    expect(validatePriorityClassUpdate({ ...old, description: "only this" }, old)).toEqual([]);
  });
});
