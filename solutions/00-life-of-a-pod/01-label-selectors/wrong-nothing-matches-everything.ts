// Mistake: `nothing()` — the selector of an absent LabelSelector — is treated as a selector
// without requirements, so it matches every object. Plausible because both have no requirements
// to check; but upstream keeps them apart on purpose: a Service with no selector must not take
// every pod in the namespace, while `selector: {}` does mean "all of them".
// @replaces selector.ts
import { type Labels, matches, type Selector } from "../../../code/api/labels.ts";

export { matches } from "../../../code/api/labels.ts";

export function selectorMatches(selector: Selector, labels: Labels): boolean {
  // The mistake: selectsNothing is never looked at.
  return selector.requirements.every((requirement) => matches(requirement, labels));
}
