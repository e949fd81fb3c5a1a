// Mistake: `!=` and `notin` reject an object that has no such label, instead of matching it.
// @replaces selector.ts
import {
  matches as courseMatches,
  type Labels,
  type Requirement,
  type Selector,
} from "../../../code/api/labels.ts";

export function matches(requirement: Requirement, labels: Labels): boolean {
  const negative = requirement.operator === "!=" || requirement.operator === "notin";
  // The mistake: "env != prod" read as "env is set, and not to prod".
  if (negative && !Object.hasOwn(labels, requirement.key)) return false;
  return courseMatches(requirement, labels);
}

export function selectorMatches(selector: Selector, labels: Labels): boolean {
  if (selector.selectsNothing) return false;
  return selector.requirements.every((requirement) => matches(requirement, labels));
}
