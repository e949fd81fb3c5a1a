/**
 * The label selector parser — the string form of a selector (`app=web,tier in (fe,be),!canary`)
 * read into a Selector: a lexer that cuts the text into tokens, and a recursive-descent parser.
 * Upstream: the Lexer, Parser and Parse of apimachinery's pkg/labels/selector.go.
 *
 * Solves:
 * - kubectl's `-l`, `?labelSelector=` and every `--selector` flag are strings; they must mean
 *   exactly what upstream makes of them, odd corners included (`x in ()` is the set {""}, `in in
 *   (in)` is valid, `!x=a` is an error), and fail with upstream's words;
 * - the words `in` and `notin` are operators only where an operator may stand, so the lexer leaves
 *   them as keywords and the parser decides by its context.
 *
 * Invariants:
 * - `tokenize` never fails and always ends with `EndOfStringToken`;
 * - every Requirement `parse` returns was built by `newRequirement` (labels.ts), and the
 *   requirements come back sorted by key; `parse(selectorToString(s))` gives `s` back.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/labels/selector.go (Token, ScannedItem, Lexer.Lex, Parser: lookahead, consume, parse, parseRequirement, parseKeyAndInferOperator, parseOperator, parseValues, parseIdentifiersList, parseExactValue; Parse)
 * @chapter 00-life-of-a-pod
 */
import {
  fail,
  newRequirement,
  type Operator,
  ok,
  type Requirement,
  type Result,
  type Selector,
  sortByKey,
  validateLabelKey,
} from "./labels.ts";

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

/** Parser: the scanned items and how far the parser has read them. */
class Parser {
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
  const cursor = new Parser(tokenize(selector));
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
function parseRequirement(cursor: Parser): Result<Requirement> {
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

function parseOperator(cursor: Parser): Result<Operator> {
  const item = cursor.consume("KeyAndOperator");
  const operator = OPERATOR_TOKENS.get(item.tok);
  if (operator === undefined) return fail(`found '${item.literal}', expected: in, notin, =, ==, !=, gt, lt`);
  return ok(operator);
}

/** The one value after `=`, `==`, `!=`, `>` or `<`; nothing written there is the empty value. */
function parseExactValue(cursor: Parser): Result<string[]> {
  const next = cursor.lookahead("Values");
  if (next.tok === "EndOfStringToken" || next.tok === "CommaToken") return ok([""]);
  const item = cursor.consume("Values");
  if (item.tok !== "IdentifierToken") return fail(`found '${item.literal}', expected: identifier`);
  return ok([item.literal]);
}
// #endregion parse-requirement

// #region parse-values
/** `( v1, v2, … )` after `in`/`notin`: a set, returned sorted and without duplicates. */
function parseValues(cursor: Parser): Result<string[]> {
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
  return parseIdentifiersList(cursor);
}

/**
 * parseIdentifiersList: the comma-separated slots up to and including ')'. A slot with nothing in it — before the
 * first comma, between two commas, after the last — is the empty value "".
 */
function parseIdentifiersList(cursor: Parser): Result<string[]> {
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
