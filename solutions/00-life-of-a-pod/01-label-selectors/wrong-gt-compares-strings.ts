// Mistake: `gt` and `lt` compare the label and the bound as strings, so "10" is not greater than "9".
// @replaces selector.ts
import {
  matches as courseMatches,
  type Labels,
  type Requirement,
  type Selector,
} from "../../../code/api/labels.ts";

export function matches(requirement: Requirement, labels: Labels): boolean {
  const { key, operator, values } = requirement;
  if (operator === "gt" || operator === "lt") {
    if (!Object.hasOwn(labels, key)) return false;
    // The mistake: text order, not numeric order.
    return operator === "gt" ? labels[key] > values[0] : labels[key] < values[0];
  }
  return courseMatches(requirement, labels);
}

export function selectorMatches(selector: Selector, labels: Labels): boolean {
  if (selector.selectsNothing) return false;
  return selector.requirements.every((requirement) => matches(requirement, labels));
}
