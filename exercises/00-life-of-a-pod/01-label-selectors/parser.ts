/**
 * Exercise, optional part: read a label selector's string form.
 *
 * Helpers you may import: from code/api/label-selector-parser.ts, `tokenize(selector)` cuts the
 * string into tokens; from code/api/labels.ts, `newRequirement(key, operator, values)` builds one
 * requirement and validates it, `validateLabelKey(key)` checks a key as the parser must, and
 * `SelectorError` is the error type. README.md ("Optional: the parser") has the grammar and the
 * error messages to use.
 */
import type { Result, Selector } from "../../../code/api/labels.ts";

/**
 * Parses a selector string such as `app=web,tier in (fe,be),!canary` into a Selector whose
 * requirements are sorted by key. Bad input gives `{ ok: false, error: new SelectorError(message) }`.
 */
export function parse(selector: string): Result<Selector> {
  throw new Error(`TODO: parse — build a Selector from tokenize(${JSON.stringify(selector)})`);
}
