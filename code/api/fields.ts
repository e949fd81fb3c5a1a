/**
 * Field selectors — `?fieldSelector=spec.nodeName=node-1`: picking objects by a few of their
 * fields rather than by their labels.
 * Upstream: apimachinery's pkg/fields.
 *
 * Solves:
 * - a kubelet wants only the pods bound to its node (`spec.nodeName=node-1`), `kubectl get events`
 *   only the events of one object (`involvedObject.name=web`), a controller only the objects that
 *   are not finished (`status.phase!=Succeeded`) — without labels the API server cannot filter on;
 * - a value may contain the characters that separate terms, so `,` `=` and `\` are escaped with
 *   a backslash (`metadata.name=a\,b` is the name "a,b").
 *
 * Invariants:
 * - a Selector is a list of terms, ANDed, sorted by the text of the term as written (upstream
 *   sorts the raw terms before parsing); no term at all matches everything;
 * - `=` and `==` mean the same; a field the object does not have reads as "" — so `spec.nodeName=`
 *   selects the unscheduled pods and `spec.nodeName!=` the scheduled ones;
 * - the field *names* are not checked here: which fields a resource lets you select on is the
 *   resource's business (the API server answers `field label not supported: …`).
 *
 * Errors are values: `parse` returns a `Result` whose error message is upstream's, word for word.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/fields/selector.go (ParseSelector, parseSelector, splitTerms, splitTerm, UnescapeValue, EscapeValue, hasTerm, notHasTerm, andTerm)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/fields/fields.go (Fields, Set)
 * @chapter 02-apiserver
 */
import { fail, ok, type Result } from "./labels.ts";

export type { Result } from "./labels.ts";
export { SelectorError } from "./labels.ts";

// #region types
/** The selectable fields of one object, such as `{"metadata.name": "web", "spec.nodeName": ""}`. */
export type Fields = Readonly<Record<string, string>>;

/** One term: `field=value`. `=` and `==` mean the same (both are upstream's hasTerm); the operator is kept as written. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: "=" | "==" | "!=";
  /** Unescaped: `a\,b` in the selector string is "a,b" here. */
  readonly value: string;
}

/** Every requirement must hold; none at all selects everything. */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
}
// #endregion types

/** The selector that matches every object (upstream's `fields.Everything()`). */
export function everything(): FieldSelector {
  return { requirements: [] };
}

export function isEmpty(selector: FieldSelector): boolean {
  return selector.requirements.length === 0;
}

// #region escaping
/**
 * EscapeValue: `\` → `\\`, then `,` → `\,` and `=` → `\=`, so a value can be written into a
 * selector string and parsed back unchanged.
 */
export function escapeValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * UnescapeValue: the inverse of escapeValue. Only `\\`, `\,` and `\=` are escape sequences; any
 * other backslash, a trailing one, or a bare `,` or `=` in a value is an error.
 */
export function unescapeValue(text: string): Result<string> {
  let out = "";
  let inSlash = false;
  for (const c of text) {
    if (inSlash) {
      if (c !== "\\" && c !== "," && c !== "=") {
        return fail(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
    } else if (c === "\\") {
      inSlash = true;
    } else if (c === "," || c === "=") {
      // Upstream formats the rune with %v, which prints its code point: '=' is "61", ',' is "44".
      return fail(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    } else {
      out += c;
    }
  }
  if (inSlash) return fail("invalid field selector: invalid escape sequence: \\");
  return ok(out);
}
// #endregion escaping

// #region split-terms
/**
 * splitTerms: the selector cut at every comma that is not escaped. The escapes stay in the
 * pieces (each value is unescaped later, once its term has been split at its operator).
 */
export function splitTerms(selector: string): string[] {
  if (selector === "") return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === "\\") inSlash = true;
    else if (c === ",") {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

/** Checked in this order at each position, so `!=` and `==` win over the `=` inside them. */
const TERM_OPERATORS = ["!=", "==", "="] as const;

/**
 * splitTerm: the term cut at the first operator found, scanning left to right. Everything before
 * it is the field name (field names never contain an operator); everything after is the value.
 */
export function splitTerm(
  term: string,
): { field: string; operator: FieldRequirement["operator"]; value: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const operator of TERM_OPERATORS) {
      if (term.startsWith(operator, i)) {
        return { field: term.slice(0, i), operator, value: term.slice(i + operator.length) };
      }
    }
  }
  return undefined;
}
// #endregion split-terms

// #region parse
/**
 * ParseSelector: `metadata.name=web,spec.nodeName!=` → two requirements. Empty terms (as in
 * `a=b,,c=d` or a trailing comma) are skipped; a term without an operator is an error that
 * quotes the whole selector and the term.
 */
export function parse(selector: string): Result<FieldSelector> {
  // Upstream sorts the raw terms, so the canonical string does not depend on their order.
  const terms = splitTerms(selector).sort();
  const requirements: FieldRequirement[] = [];
  for (const term of terms) {
    if (term === "") continue;
    const parts = splitTerm(term);
    if (!parts) return fail(`invalid selector: '${selector}'; can't understand '${term}'`);
    const value = unescapeValue(parts.value);
    if (!value.ok) return value;
    requirements.push({ field: parts.field, operator: parts.operator, value: value.value });
  }
  return ok({ requirements });
}
// #endregion parse

// #region matches
/**
 * Does the object (its selectable fields) satisfy every term? A field the object lacks reads as
 * "" — as upstream's `Fields.Get` does — so `status.phase!=Running` selects an object without a
 * phase, and `spec.nodeName=` one without a node.
 */
export function matches(selector: FieldSelector, fields: Fields): boolean {
  return selector.requirements.every((r) => {
    const actual = Object.hasOwn(fields, r.field) ? fields[r.field] : "";
    return r.operator === "!=" ? actual !== r.value : actual === r.value;
  });
}
// #endregion matches

/** The selector as upstream prints it: `field=value` (== prints as =), values escaped, ','-joined. */
export function selectorToString(selector: FieldSelector): string {
  return selector.requirements
    .map((r) => `${r.field}${r.operator === "!=" ? "!=" : "="}${escapeValue(r.value)}`)
    .join(",");
}

/**
 * RequiresExactMatch: the value a selector demands for one field (`spec.nodeName=node-1` →
 * "node-1"), if it has an `=`/`==` term on it. Stores use it to index (pods by node).
 */
export function requiresExactMatch(selector: FieldSelector, field: string): string | undefined {
  const r = selector.requirements.find((x) => x.field === field && x.operator !== "!=");
  return r?.value;
}
