/**
 * Exercise: label selectors — decide which objects a selector picks.
 *
 * The types and the validation helpers are the course's own, imported from code/api/labels.ts;
 * you write the matching. README.md has the rules. (The string form's parser is the optional
 * part, in parser.ts.)
 */
import type { Labels, Requirement, Selector } from "../../../code/api/labels.ts";

/**
 * Does one requirement hold for an object's labels?
 * Operators: "=", "==", "in", "!=", "notin", "exists" (bare `key`), "!" (`!key`), "gt", "lt".
 */
export function matches(requirement: Requirement, labels: Labels): boolean {
  throw new Error(
    `TODO: matches — does ${requirement.key} ${requirement.operator} hold for ${JSON.stringify(labels)}?`,
  );
}

/** Does the selector pick an object with these labels? Its requirements are all ANDed. */
export function selectorMatches(selector: Selector, labels: Labels): boolean {
  throw new Error(
    `TODO: selectorMatches — ${selector.requirements.length} requirements, ANDed, against ${JSON.stringify(labels)}`,
  );
}
