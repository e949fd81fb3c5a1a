// Mistake: the commas of a selector are read as OR — one matching requirement is taken as enough.
// @replaces selector.ts
import { type Labels, matches, type Selector } from "../../../code/api/labels.ts";

export { matches } from "../../../code/api/labels.ts";

export function selectorMatches(selector: Selector, labels: Labels): boolean {
  if (selector.selectsNothing) return false;
  if (selector.requirements.length === 0) return true;
  // The mistake: some() where every() belongs.
  return selector.requirements.some((requirement) => matches(requirement, labels));
}
