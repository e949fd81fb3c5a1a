// Mistake: `x in ()` is read as the empty set (and rejected) instead of the set holding "".
// @replaces parser.ts
import { parse as courseParse } from "../../../code/api/label-selector-parser.ts";
import { type Result, type Selector, SelectorError } from "../../../code/api/labels.ts";

export function parse(selector: string): Result<Selector> {
  // The mistake: nothing between the parentheses collected as no values at all, which
  // newRequirement then refuses for `in`/`notin`.
  if (/\(\s*\)/.test(selector)) {
    return {
      ok: false,
      error: new SelectorError(
        "unable to parse requirement: values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
      ),
    };
  }
  return courseParse(selector);
}
