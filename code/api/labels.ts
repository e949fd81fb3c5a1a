/**
 * Label selectors — "which objects do you mean?", asked the same way by every component.
 * Upstream: apimachinery's pkg/labels, the package every component links.
 *
 * Solves:
 * - one language for picking objects: the API server filters list and watch by `?labelSelector=`,
 *   a ReplicaSet owns the pods its selector matches, the scheduler spreads and co-locates pods by
 *   the selectors in affinity terms;
 * - two spellings of one idea turned into the same Selector: the string form
 *   (`kubectl get pods -l 'app=web,tier in (fe,be),!canary'`) and the structured form in object
 *   specs (`matchLabels` + `matchExpressions`);
 * - a canonical string form, so two selectors that mean the same print the same.
 *
 * Invariants:
 * - a Selector's requirements are ANDed and sorted by key; a Selector without requirements
 *   matches every object (only `nothing()` matches none);
 * - every Requirement built here came through `newRequirement`: its key is a qualified name, its
 *   values are valid label values, and the number of values fits its operator;
 * - `!=` and `notin` match an object that lacks the key — "not production" includes unlabelled;
 * - the values a parsed `in`/`notin` carries are a set: sorted, without duplicates.
 *
 * Errors are values: every fallible function returns a `Result` whose error message is
 * upstream's, word for word (the API server sends it back to kubectl unchanged).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/labels/selector.go (Requirement, NewRequirement, Lexer, Parser, Parse)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/selection/operator.go (Operator)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go (LabelSelectorAsSelector)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go (IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go (Invalid, NotSupported)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/errors/errors.go (NewAggregate)
 * @chapter 00-life-of-a-pod
 */

// #region types
/** An object's labels (`metadata.labels`). */
export type Labels = Readonly<Record<string, string>>;

/**
 * How a requirement relates its key to its values. The strings are upstream's
 * `selection.Operator` constants: `exists` and `!` are the bare `key` and `!key` forms,
 * `gt`/`lt` are written `>`/`<` in a selector string.
 */
export type Operator = "=" | "==" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

/** One condition on one label, such as `tier in (backend,cache)`. */
export interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  /** One value for `=`, `==`, `!=`, `gt`, `lt`; at least one for `in`/`notin`; none for `exists`/`!`. */
  readonly values: readonly string[];
}

/** A parsed selector: all of its requirements must hold. */
export interface Selector {
  /** ANDed, sorted by key. None at all: the selector matches every object. */
  readonly requirements: readonly Requirement[];
  /**
   * Set only by `nothing()`, the selector of an absent LabelSelector: it matches no object.
   * (Upstream: `labels.Nothing()`, whose `Requirements()` reports `selectable == false`.)
   */
  readonly selectsNothing?: true;
}

/** A bad selector or requirement; `message` is upstream's text, word for word. */
export class SelectorError extends Error {
  override readonly name = "SelectorError";
}

/** What every fallible function here returns: the value, or the error that says what was wrong. */
export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: SelectorError };

function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

function fail(message: string): Result<never> {
  return { ok: false, error: new SelectorError(message) };
}
// #endregion types

// ---------------------------------------------------------------------------------------------
// Validation of label keys and values (pkg/util/validation). The regular expressions are spelled
// exactly as upstream's because they appear, verbatim, in the error messages.
// ---------------------------------------------------------------------------------------------

const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_NAME_MAX_LENGTH = 63;

const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MAX_LENGTH = 63;

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

const qualifiedNameRegexp = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const labelValueRegexp = new RegExp(`^${LABEL_VALUE_FMT}$`);
const dns1123SubdomainRegexp = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);

/** Upstream counts bytes (Go's len), not UTF-16 code units. */
function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** Upstream's RegexError wording — including the double space before each "or". */
function regexError(message: string, regex: string, examples: readonly string[]): string {
  const shown = examples.map((example) => `'${example}', `).join(" or ");
  return `${message} (e.g. ${shown}regex used for validation is '${regex}')`;
}

/** IsDNS1123Subdomain: the prefix of a label key, such as `app.kubernetes.io`. */
export function isDNS1123Subdomain(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH)
    errors.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRegexp.test(value)) {
    errors.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, ["example.com"]));
  }
  return errors;
}

// #region label-validation
/**
 * IsQualifiedName: what a label key must look like — `name` or `prefix/name`, where the prefix
 * is a DNS subdomain and the name is at most 63 characters of `[-A-Za-z0-9_.]` that starts and
 * ends alphanumeric. Returns every problem found (none: the key is valid).
 */
export function isQualifiedName(value: string): string[] {
  const parts = value.split("/");
  if (parts.length > 2) {
    // More than one '/': upstream does not look further and describes the whole format instead.
    return [
      "a qualified name " +
        regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, ["MyName", "my.name", "123-abc"]) +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  const errors: string[] = [];
  const name = parts.length === 2 ? parts[1] : parts[0];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix === "") errors.push("prefix part must be non-empty");
    else errors.push(...isDNS1123Subdomain(prefix).map((message) => `prefix part ${message}`));
  }
  if (name === "") errors.push("name part must be non-empty");
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) {
    errors.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  }
  if (!qualifiedNameRegexp.test(name)) {
    errors.push(
      `name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, ["MyName", "my.name", "123-abc"])}`,
    );
  }
  return errors;
}

/** IsValidLabelValue: empty, or up to 63 characters of `[-A-Za-z0-9_.]` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errors.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRegexp.test(value)) {
    errors.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, ["MyValue", "my_value", "12345"]));
  }
  return errors;
}
// #endregion label-validation

// ---------------------------------------------------------------------------------------------
// Field errors (pkg/util/validation/field), reduced to the text they print. A field path is a
// string such as `values[0][tier]`; `undefined` is Go's nil *field.Path, which prints "<nil>".
// ---------------------------------------------------------------------------------------------

function childPath(path: string | undefined, name: string): string {
  return path === undefined ? name : `${path}.${name}`;
}

/** Go's %q for a string, and %#v for a []string (an empty one is always nil where we print it). */
function formatBadValue(value: string | readonly string[]): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value.length === 0) return "[]string(nil)";
  return `[]string{${value.map((v) => JSON.stringify(v)).join(", ")}}`;
}

/** field.Invalid(path, value, detail).Error() */
function invalidValue(path: string | undefined, value: string | readonly string[], detail: string): string {
  return `${path ?? "<nil>"}: Invalid value: ${formatBadValue(value)}: ${detail}`;
}

/** errors.NewAggregate(...).Error(): one message as is, several deduplicated inside [..]. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0] : `[${unique.join(", ")}]`;
}

/**
 * validateLabelKey: the key checked as a field at `path`. The string parser validates keys with
 * no path at all, which is why kubectl shows `<nil>: Invalid value: ...` for a bad key.
 */
export function validateLabelKey(key: string, path?: string): SelectorError | undefined {
  const errors = isQualifiedName(key);
  if (errors.length === 0) return undefined;
  return new SelectorError(invalidValue(path, key, errors.join("; ")));
}

/** Go's strconv.ParseInt(text, 10, 64): optional sign, decimal digits, within int64. */
function parseInt64(text: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  if (value < -(2n ** 63n) || value > 2n ** 63n - 1n) return undefined;
  return value;
}

// #region new-requirement
/**
 * NewRequirement: the only way to build a Requirement, so that none is ever invalid.
 *
 * Checks the key, that the number of values fits the operator (`in`/`notin` need at least one,
 * `exists`/`!` none, the rest exactly one), that `gt`/`lt` values are integers, and that every
 * value is a valid label value. All problems are reported together, as upstream aggregates them.
 */
export function newRequirement(
  key: string,
  operator: Operator,
  values: readonly string[],
  path?: string,
): Result<Requirement> {
  const errors: string[] = [];
  const keyError = validateLabelKey(key, childPath(path, "key"));
  if (keyError) errors.push(keyError.message);

  const valuesPath = childPath(path, "values");
  switch (operator) {
    case "in":
    case "notin":
      if (values.length === 0) {
        errors.push(
          invalidValue(valuesPath, values, "for 'in', 'notin' operators, values set can't be empty"),
        );
      }
      break;
    case "=":
    case "==":
    case "!=":
      if (values.length !== 1) {
        errors.push(invalidValue(valuesPath, values, "exact-match compatibility requires one single value"));
      }
      break;
    case "exists":
    case "!":
      if (values.length !== 0) {
        errors.push(
          invalidValue(valuesPath, values, "values set must be empty for exists and does not exist"),
        );
      }
      break;
    case "gt":
    case "lt":
      if (values.length !== 1) {
        errors.push(
          invalidValue(valuesPath, values, "for 'Gt', 'Lt' operators, exactly one value is required"),
        );
      }
      values.forEach((value, i) => {
        if (parseInt64(value) === undefined) {
          errors.push(
            invalidValue(
              `${valuesPath}[${i}]`,
              value,
              "for 'Gt', 'Lt' operators, the value must be an integer",
            ),
          );
        }
      });
      break;
    default:
      // Unreachable from typed code; guards operators that arrive as plain JSON.
      errors.push(
        `${childPath(path, "operator")}: Unsupported value: ${formatBadValue(String(operator))}: ` +
          `supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"`,
      );
  }

  values.forEach((value, i) => {
    const valueErrors = isValidLabelValue(value);
    if (valueErrors.length > 0) {
      errors.push(invalidValue(`${valuesPath}[${i}][${key}]`, value, valueErrors.join("; ")));
    }
  });

  if (errors.length > 0) return fail(aggregate(errors));
  return ok({ key, operator, values: [...values] });
}
// #endregion new-requirement

// #region requirement-matches
/**
 * Does one requirement hold for an object's labels?
 *
 * The negative operators (`!=`, `notin`, `!`) hold for an object that lacks the key: asking for
 * "env notin (prod)" means "anything not known to be prod", unlabelled objects included.
 * `gt`/`lt` compare integers, and never hold when either side is not one.
 */
export function matches(requirement: Requirement, labels: Labels): boolean {
  const { key, operator, values } = requirement;
  // hasOwn, not `key in labels`: a label named "constructor" must not find Object.prototype's.
  const present = Object.hasOwn(labels, key);
  switch (operator) {
    case "=":
    case "==":
    case "in":
      return present && values.includes(labels[key]);
    case "!=":
    case "notin":
      return !present || !values.includes(labels[key]);
    case "exists":
      return present;
    case "!":
      return !present;
    case "gt":
    case "lt":
      return present && integerComparisonHolds(operator, labels[key], values);
    default:
      return false;
  }
}

function integerComparisonHolds(
  operator: "gt" | "lt",
  labelValue: string,
  values: readonly string[],
): boolean {
  if (values.length !== 1) return false;
  const actual = parseInt64(labelValue);
  const bound = parseInt64(values[0]);
  // Compared as numbers, never as strings: "10" > "9" although "10" < "9" as text.
  if (actual === undefined || bound === undefined) return false;
  return operator === "gt" ? actual > bound : actual < bound;
}
// #endregion requirement-matches

// #region selector-matches
/** Every requirement must hold (the commas in a selector string are ANDs); none at all: everything matches. */
export function selectorMatches(selector: Selector, labels: Labels): boolean {
  if (selector.selectsNothing) return false;
  return selector.requirements.every((requirement) => matches(requirement, labels));
}
// #endregion selector-matches

/** The selector that matches every object (`labels.Everything()`). */
export function everything(): Selector {
  return { requirements: [] };
}

/** The selector that matches no object (`labels.Nothing()`): what an absent LabelSelector means. */
export function nothing(): Selector {
  return { requirements: [], selectsNothing: true };
}

/** True for a selector that does not narrow anything down (`Selector.Empty()`). */
export function isEmptySelector(selector: Selector): boolean {
  return !selector.selectsNothing && selector.requirements.length === 0;
}

/**
 * `key=value` for every entry — the selector a Service or a ReplicationController writes as a
 * plain map (`labels.SelectorFromValidatedSet`). The set is trusted to be valid.
 */
export function selectorFromSet(set: Labels): Selector {
  const requirements = Object.entries(set).map(
    ([key, value]): Requirement => ({ key, operator: "=", values: [value] }),
  );
  return { requirements: sortByKey(requirements) };
}

function sortByKey(requirements: readonly Requirement[]): Requirement[] {
  // Plain code-unit order, as Go compares strings byte by byte (keys are ASCII), not localeCompare.
  return [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// The string form: a lexer that cuts the text into tokens, and a recursive-descent parser.
// ---------------------------------------------------------------------------------------------

// #region tokenize
/** The kinds of token, named as upstream's `Token` constants. */
export type Token =
  | "EndOfStringToken"
  | "ClosedParToken"
  | "CommaToken"
  | "DoesNotExistToken"
  | "DoubleEqualsToken"
  | "EqualsToken"
  | "GreaterThanToken"
  | "IdentifierToken"
  | "InToken"
  | "LessThanToken"
  | "NotEqualsToken"
  | "NotInToken"
  | "OpenParToken";

/** One token and the text it was cut from (`""` for the end of the string). */
export interface ScannedItem {
  readonly tok: Token;
  readonly literal: string;
}

const SYMBOL_TOKENS = new Map<string, Token>([
  ["==", "DoubleEqualsToken"],
  ["!=", "NotEqualsToken"],
  ["=", "EqualsToken"],
  ["!", "DoesNotExistToken"],
  [">", "GreaterThanToken"],
  ["<", "LessThanToken"],
  ["(", "OpenParToken"],
  [")", "ClosedParToken"],
  [",", "CommaToken"],
]);

const KEYWORD_TOKENS = new Map<string, Token>([
  ["in", "InToken"],
  ["notin", "NotInToken"],
]);

function isWhitespace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\r" || ch === "\n";
}

/** The characters that end an identifier and start an operator. */
function isSpecialSymbol(ch: string): boolean {
  return "=!(),<>".includes(ch);
}

/**
 * Cuts a selector string into tokens; the last one is always `EndOfStringToken`.
 *
 * Whitespace (space, tab, CR, LF) only separates tokens. An identifier runs until whitespace or
 * one of `= ! ( ) , < >`, so `a||b` and `x.y/z` are single identifiers that validation judges
 * later. `in` and `notin` come out as keywords here; only the parser knows whether they are
 * operators (`x in (a)`) or plain words (`in=notin`).
 */
export function tokenize(selector: string): ScannedItem[] {
  const items: ScannedItem[] = [];
  let pos = 0;
  for (;;) {
    while (pos < selector.length && isWhitespace(selector[pos])) pos++;
    if (pos >= selector.length) {
      items.push({ tok: "EndOfStringToken", literal: "" });
      return items;
    }
    const scanned = isSpecialSymbol(selector[pos]) ? scanSymbol(selector, pos) : scanWord(selector, pos);
    items.push(scanned.item);
    pos = scanned.end;
  }
}

/**
 * The longest operator at `pos`. Every special character is a token on its own, so this never
 * fails (upstream's ErrorToken cannot come out); only `==` and `!=` are two characters long.
 */
function scanSymbol(selector: string, pos: number): { item: ScannedItem; end: number } {
  const two = selector.slice(pos, pos + 2);
  const twoCharToken = SYMBOL_TOKENS.get(two);
  if (two.length === 2 && twoCharToken !== undefined) {
    return { item: { tok: twoCharToken, literal: two }, end: pos + 2 };
  }
  const one = selector[pos];
  return { item: { tok: SYMBOL_TOKENS.get(one)!, literal: one }, end: pos + 1 };
}

function scanWord(selector: string, pos: number): { item: ScannedItem; end: number } {
  let end = pos;
  while (end < selector.length && !isWhitespace(selector[end]) && !isSpecialSymbol(selector[end])) end++;
  const word = selector.slice(pos, end);
  return { item: { tok: KEYWORD_TOKENS.get(word) ?? "IdentifierToken", literal: word }, end };
}
// #endregion tokenize

/**
 * Where the parser is reading. `KeyAndOperator`: where an operator may stand, so `in` and
 * `notin` are keywords. `Values`: everywhere else, where they are ordinary words, which is what
 * makes `in in (in)` a valid selector.
 */
type ParserContext = "KeyAndOperator" | "Values";

/** The scanned items and how far the parser has read them. */
class TokenCursor {
  private position = 0;

  constructor(private readonly items: readonly ScannedItem[]) {}

  /** The next item, without consuming it. */
  lookahead(context: ParserContext): ScannedItem {
    return asSeenIn(context, this.items[Math.min(this.position, this.items.length - 1)]);
  }

  /** The next item, consumed. Reading past the end keeps returning EndOfStringToken. */
  consume(context: ParserContext): ScannedItem {
    const item = this.lookahead(context);
    this.position++;
    return item;
  }
}

function asSeenIn(context: ParserContext, item: ScannedItem): ScannedItem {
  if (context === "Values" && (item.tok === "InToken" || item.tok === "NotInToken")) {
    return { tok: "IdentifierToken", literal: item.literal };
  }
  return item;
}

function startsRequirement(item: ScannedItem): boolean {
  return item.tok === "IdentifierToken" || item.tok === "DoesNotExistToken";
}

// #region parse
/**
 * Parses the string form of a selector:
 *
 *   selector     ::= requirement { "," requirement }      (or the empty string)
 *   requirement  ::= [ "!" ] KEY [ set-based | exact-match ]
 *   set-based    ::= ( "in" | "notin" ) "(" [ VALUE { "," [ VALUE ] } ] ")"
 *   exact-match  ::= ( "=" | "==" | "!=" | ">" | "<" ) [ VALUE ]
 *
 * A bare KEY means the key exists, `!KEY` that it does not. A missing VALUE is the empty string:
 * `x=` selects objects whose label x is "", and `x in ()` is the set holding only "".
 * The requirements come back sorted by key, so `b=1,a=2` and `a=2,b=1` are the same selector.
 */
export function parse(selector: string): Result<Selector> {
  const cursor = new TokenCursor(tokenize(selector));
  const requirements: Requirement[] = [];
  const first = cursor.lookahead("Values");
  if (first.tok !== "EndOfStringToken") {
    if (!startsRequirement(first)) {
      return fail(`found '${first.literal}', expected: !, identifier, or 'end of string'`);
    }
    for (;;) {
      const requirement = parseRequirement(cursor);
      if (!requirement.ok) return fail(`unable to parse requirement: ${requirement.error.message}`);
      requirements.push(requirement.value);

      const separator = cursor.consume("Values");
      if (separator.tok === "EndOfStringToken") break;
      if (separator.tok !== "CommaToken") {
        return fail(`found '${separator.literal}', expected: ',' or 'end of string'`);
      }
      const next = cursor.lookahead("Values");
      if (!startsRequirement(next)) return fail(`found '${next.literal}', expected: identifier after ','`);
    }
  }
  return ok({ requirements: sortByKey(requirements) });
}
// #endregion parse

// #region parse-requirement
/** One requirement, in the grammar's three shapes: `!KEY`, `KEY` alone, or `KEY` operator values. */
function parseRequirement(cursor: TokenCursor): Result<Requirement> {
  const first = cursor.consume("Values");
  const negated = first.tok === "DoesNotExistToken";
  const keyItem = negated ? cursor.consume("Values") : first;
  if (keyItem.tok !== "IdentifierToken") return fail(`found '${keyItem.literal}', expected: identifier`);
  const key = keyItem.literal;
  const keyError = validateLabelKey(key);
  if (keyError) return { ok: false, error: keyError };

  // `!key` is complete by itself. Whatever follows it — as in `!x=a` — is left for the caller,
  // which wants a ',' or the end there and says so.
  if (negated) return newRequirement(key, "!", []);
  const next = cursor.lookahead("Values").tok;
  if (next === "EndOfStringToken" || next === "CommaToken") return newRequirement(key, "exists", []);

  const operator = parseOperator(cursor);
  if (!operator.ok) return operator;
  const values =
    operator.value === "in" || operator.value === "notin" ? parseValues(cursor) : parseExactValue(cursor);
  if (!values.ok) return values;
  return newRequirement(key, operator.value, values.value);
}

const OPERATOR_TOKENS = new Map<Token, Operator>([
  ["InToken", "in"],
  ["NotInToken", "notin"],
  ["EqualsToken", "="],
  ["DoubleEqualsToken", "=="],
  ["NotEqualsToken", "!="],
  ["GreaterThanToken", "gt"],
  ["LessThanToken", "lt"],
]);

function parseOperator(cursor: TokenCursor): Result<Operator> {
  const item = cursor.consume("KeyAndOperator");
  const operator = OPERATOR_TOKENS.get(item.tok);
  if (operator === undefined) return fail(`found '${item.literal}', expected: in, notin, =, ==, !=, gt, lt`);
  return ok(operator);
}

/** The one value after `=`, `==`, `!=`, `>` or `<`; nothing written there is the empty value. */
function parseExactValue(cursor: TokenCursor): Result<string[]> {
  const next = cursor.lookahead("Values");
  if (next.tok === "EndOfStringToken" || next.tok === "CommaToken") return ok([""]);
  const item = cursor.consume("Values");
  if (item.tok !== "IdentifierToken") return fail(`found '${item.literal}', expected: identifier`);
  return ok([item.literal]);
}
// #endregion parse-requirement

// #region parse-values
/** `( v1, v2, … )` after `in`/`notin`: a set, returned sorted and without duplicates. */
function parseValues(cursor: TokenCursor): Result<string[]> {
  const open = cursor.consume("Values");
  if (open.tok !== "OpenParToken") return fail(`found '${open.literal}' expected: '('`);
  const first = cursor.lookahead("Values");
  if (first.tok === "ClosedParToken") {
    cursor.consume("Values");
    return ok([""]); // `()` is not the empty set (that would be invalid) but the set {""}
  }
  if (first.tok !== "IdentifierToken" && first.tok !== "CommaToken") {
    return fail(`found '${first.literal}', expected: ',', ')' or identifier`);
  }
  return parseValueList(cursor);
}

/**
 * The comma-separated slots up to and including ')'. A slot with nothing in it — before the
 * first comma, between two commas, after the last — is the empty value "".
 */
function parseValueList(cursor: TokenCursor): Result<string[]> {
  const values = new Set<string>();
  let commasInARow = 0;
  for (;;) {
    const item = cursor.consume("Values");
    if (item.tok === "IdentifierToken") {
      values.add(item.literal);
      const separator = cursor.consume("Values");
      if (separator.tok === "ClosedParToken") break;
      if (separator.tok !== "CommaToken") return fail(`found '${separator.literal}', expected: ',' or ')'`);
      commasInARow = 1;
    } else if (item.tok === "CommaToken") {
      values.add("");
      commasInARow++;
    } else if (item.tok === "ClosedParToken" && commasInARow % 2 === 1) {
      // Only reachable right after a comma: an empty last slot.
      values.add("");
      break;
    } else {
      // An operator or the end of the string where a value belongs — or ')' after an even run of
      // commas: Kubernetes v1.32 reads ',,' as one unit and then wants a value or a comma, so
      // `x in (a,,)` is an error in v1.32 while `x in (a,,,)` is not. (v1.35 accepts both:
      // kubernetes/kubernetes commit d4f8bebda089, "Fix label selector parsing for consecutive commas".)
      return fail(`found '${item.literal}', expected: ',', or identifier`);
    }
  }
  return ok([...values].sort());
}
// #endregion parse-values

// #region canonical-string
// Each operator as a selector string writes it: the lexer's tokens read backwards.
const WRITTEN_OPERATOR: Record<Operator, string> = {
  "=": "=",
  "==": "==",
  "!=": "!=",
  in: " in ",
  notin: " notin ",
  gt: ">",
  lt: "<",
  exists: "",
  "!": "",
};

/**
 * A requirement as upstream prints it: `x=a`, `x==a`, `x!=a`, `x in (a,b)`, `x notin (a)`, `x>1`,
 * `x`, `!x`. Set values are printed sorted, so the text does not depend on how they were written.
 */
export function requirementToString(requirement: Requirement): string {
  const { key, operator, values } = requirement;
  if (operator === "exists") return key;
  if (operator === "!") return `!${key}`;
  const written = [...values].sort().join(",");
  const isSet = operator === "in" || operator === "notin";
  return `${key}${WRITTEN_OPERATOR[operator]}${isSet ? `(${written})` : written}`;
}

/**
 * The canonical string form: requirements (already sorted by key) joined by ','. Parsing it
 * gives the same selector back. Everything and nothing both print as "" — as upstream's do.
 */
export function selectorToString(selector: Selector): string {
  if (selector.selectsNothing) return "";
  return selector.requirements.map(requirementToString).join(",");
}
// #endregion canonical-string

// ---------------------------------------------------------------------------------------------
// The structured form found in object specs (meta/v1 LabelSelector).
// ---------------------------------------------------------------------------------------------

/** The operators of the structured form (meta/v1 LabelSelectorOperator). */
export type LabelSelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";

/** One `matchExpressions` entry. */
export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values?: string[];
}

/** `spec.selector` of a ReplicaSet, Deployment, Job, or an affinity term (meta/v1 LabelSelector). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

const STRUCTURED_OPERATORS = new Map<string, Operator>([
  ["In", "in"],
  ["NotIn", "notin"],
  ["Exists", "exists"],
  ["DoesNotExist", "!"],
]);

// #region label-selector-as-selector
/**
 * LabelSelectorAsSelector: the structured form as a Selector.
 *
 * An absent selector selects nothing, an empty one everything — the difference between "no
 * selector was given" and "no condition was given". Each `matchLabels` entry becomes `key=value`;
 * each expression goes through newRequirement, so `In`/`NotIn` without values and
 * `Exists`/`DoesNotExist` with values are errors.
 */
export function labelSelectorAsSelector(labelSelector: LabelSelector | null | undefined): Result<Selector> {
  if (labelSelector === null || labelSelector === undefined) return ok(nothing());
  const matchLabels = Object.entries(labelSelector.matchLabels ?? {});
  const expressions = labelSelector.matchExpressions ?? [];
  if (matchLabels.length + expressions.length === 0) return ok(everything());

  const requirements: Requirement[] = [];
  for (const [key, value] of matchLabels) {
    const requirement = newRequirement(key, "=", [value]);
    if (!requirement.ok) return requirement;
    requirements.push(requirement.value);
  }
  for (const expression of expressions) {
    const operator = STRUCTURED_OPERATORS.get(expression.operator);
    if (operator === undefined) {
      return fail(`${JSON.stringify(expression.operator)} is not a valid label selector operator`);
    }
    const requirement = newRequirement(expression.key, operator, expression.values ?? []);
    if (!requirement.ok) return requirement;
    requirements.push(requirement.value);
  }
  return ok({ requirements: sortByKey(requirements) });
}
// #endregion label-selector-as-selector
