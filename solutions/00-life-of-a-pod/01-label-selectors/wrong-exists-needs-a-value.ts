// Mistake: `exists` and `!` test the label's value for truthiness instead of the key's presence,
// so a label set to the empty string counts as missing. Plausible because `if (labels[key])` is
// the everyday JavaScript presence test; but `""` is a valid label value, and a pod labelled
// `canary: ""` must be picked by `canary` and passed over by `!canary`.
// @replaces selector.ts
import {
  matches as courseMatches,
  type Labels,
  type Requirement,
  type Selector,
} from "../../../code/api/labels.ts";

export function matches(requirement: Requirement, labels: Labels): boolean {
  // The mistake: a truthiness test where Object.hasOwn belongs.
  if (requirement.operator === "exists") return Boolean(labels[requirement.key]);
  if (requirement.operator === "!") return !labels[requirement.key];
  return courseMatches(requirement, labels);
}

export function selectorMatches(selector: Selector, labels: Labels): boolean {
  if (selector.selectsNothing) return false;
  return selector.requirements.every((requirement) => matches(requirement, labels));
}
