/**
 * Exercise: label selectors — decide which objects a selector picks, and read its string form.
 *
 * The types, the tokenizer and the validation helpers are the course's own, imported from
 * code/api/labels.ts and code/api/label-selector-parser.ts; you write the matching and the
 * parser. README.md has the rules and the error messages to use.
 *
 * Helpers you may import: from code/api/label-selector-parser.ts, `tokenize(selector)` cuts the
 * string into tokens; from code/api/labels.ts, `newRequirement(key, operator, values)` builds one
 * requirement and validates it, `validateLabelKey(key)` checks a key as the parser must, and
 * `SelectorError` is the error type.
 */
import type { Labels, Requirement, Result, Selector } from "../../../code/api/labels.ts";

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

/**
 * Parses a selector string such as `app=web,tier in (fe,be),!canary` into a Selector whose
 * requirements are sorted by key. Bad input gives `{ ok: false, error: new SelectorError(message) }`.
 */
export function parse(selector: string): Result<Selector> {
  throw new Error(`TODO: parse — build a Selector from tokenize(${JSON.stringify(selector)})`);
}
