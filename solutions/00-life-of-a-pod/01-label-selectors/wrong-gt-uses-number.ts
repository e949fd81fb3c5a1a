// Mistake: `gt` and `lt` read the label with Number() and accept it when Number.isInteger says so.
// Plausible because that is the usual JavaScript way to "parse an integer"; but Number("") is 0,
// Number("1e3") is 1000 and Number("0x10") is 16 — none of them an integer to upstream's
// strconv.ParseInt — and beyond 2^53 two different integers compare as equal.
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
    // The mistake: JavaScript's number reading, not a decimal integer's.
    const actual = Number(labels[key]);
    const bound = Number(values[0]);
    if (!Number.isInteger(actual) || !Number.isInteger(bound)) return false;
    return operator === "gt" ? actual > bound : actual < bound;
  }
  return courseMatches(requirement, labels);
}

export function selectorMatches(selector: Selector, labels: Labels): boolean {
  if (selector.selectsNothing) return false;
  return selector.requirements.every((requirement) => matches(requirement, labels));
}
