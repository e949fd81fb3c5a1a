// Mistake: `!x=a` is accepted as `x!=a`, instead of rejected: `!` makes a complete `!key` requirement.
// @replaces parser.ts
import { parse as courseParse } from "../../../code/api/label-selector-parser.ts";
import type { Result, Selector } from "../../../code/api/labels.ts";

export function parse(selector: string): Result<Selector> {
  // The mistake: after `!key`, an '=' and a value are read as the rest of a `!=` requirement.
  const rewritten = selector.replace(/!\s*([^\s=!(),<>]+)\s*=/g, "$1!=");
  return courseParse(rewritten);
}
