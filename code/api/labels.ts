/**
 * Label selectors — "which objects do you mean?", asked the same way by every component.
 * Upstream: apimachinery's pkg/labels, the package every component links.
 *
 * Solves:
 * - one language for picking objects: the API server filters list and watch by `?labelSelector=`,
 *   a ReplicaSet owns the pods its selector matches, the scheduler spreads and co-locates pods by
 *   the selectors in affinity terms;
 * - two spellings of one idea turned into the same Selector: the string form
 *   (`kubectl get pods -l 'app=web,tier in (fe,be),!canary'`, read by label-selector-parser.ts)
 *   and the structured form in object specs (`matchLabels` + `matchExpressions`);
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
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/labels/selector.go (Selector, Requirement, NewRequirement, Requirement.Matches, Everything, Nothing, ByKey, Requirement.String)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/selection/operator.go (Operator)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go (LabelSelectorAsSelector)
 * @chapter 00-life-of-a-pod
 */

import {
  aggregateMessage,
  childPath,
  type FieldError,
  fieldErrorToString,
  type GoValue,
  goStringSlice,
  indexPath,
  invalid,
  keyPath,
  notSupported,
} from "./field-errors.ts";
import { isQualifiedName, isValidLabelValue } from "./string-validation.ts";

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

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail(message: string): Result<never> {
  return { ok: false, error: new SelectorError(message) };
}
// #endregion types

/**
 * validateLabelKey: the key checked as a field at `path`. The string parser validates keys with
 * no path at all, which is why kubectl shows `<nil>: Invalid value: ...` for a bad key.
 */
export function validateLabelKey(key: string, path?: string): SelectorError | undefined {
  const error = labelKeyError(key, path ?? "<nil>");
  return error && new SelectorError(fieldErrorToString(error));
}

/** The key's problems as one field error (upstream joins IsQualifiedName's messages with "; "). */
function labelKeyError(key: string, path: string): FieldError | undefined {
  const errors = isQualifiedName(key);
  return errors.length === 0 ? undefined : invalid(path, key, errors.join("; "));
}

/** Go's %#v of the []string a requirement carries: an empty one is always nil where we print it. */
function goValues(values: readonly string[]): GoValue {
  return goStringSlice(values.length > 0 ? values : undefined);
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
  const errors: FieldError[] = [];
  const keyError = labelKeyError(key, childPath(path ?? "", "key"));
  if (keyError) errors.push(keyError);

  const valuesPath = childPath(path ?? "", "values");
  switch (operator) {
    case "in":
    case "notin":
      if (values.length === 0) {
        errors.push(
          invalid(valuesPath, goValues(values), "for 'in', 'notin' operators, values set can't be empty"),
        );
      }
      break;
    case "=":
    case "==":
    case "!=":
      if (values.length !== 1) {
        errors.push(
          invalid(valuesPath, goValues(values), "exact-match compatibility requires one single value"),
        );
      }
      break;
    case "exists":
    case "!":
      if (values.length !== 0) {
        errors.push(
          invalid(valuesPath, goValues(values), "values set must be empty for exists and does not exist"),
        );
      }
      break;
    case "gt":
    case "lt":
      if (values.length !== 1) {
        errors.push(
          invalid(valuesPath, goValues(values), "for 'Gt', 'Lt' operators, exactly one value is required"),
        );
      }
      values.forEach((value, i) => {
        if (parseInt64(value) === undefined) {
          errors.push(
            invalid(
              indexPath(valuesPath, i),
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
        notSupported(childPath(path ?? "", "operator"), String(operator), [
          "in",
          "notin",
          "=",
          "==",
          "!=",
          "gt",
          "lt",
          "exists",
          "!",
        ]),
      );
  }

  values.forEach((value, i) => {
    const valueErrors = isValidLabelValue(value);
    if (valueErrors.length > 0) {
      errors.push(invalid(keyPath(indexPath(valuesPath, i), key), value, valueErrors.join("; ")));
    }
  });

  if (errors.length > 0) return fail(aggregateMessage(errors));
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
  // A loop, not `every(…)`: this runs for every pod on every node in some Filters, and a
  // callback is a closure made per call.
  for (const requirement of selector.requirements) if (!matches(requirement, labels)) return false;
  return true;
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

/** ByKey: requirements in key order, as every Selector holds them. */
export function sortByKey(requirements: readonly Requirement[]): Requirement[] {
  // Plain code-unit order, as Go compares strings byte by byte (keys are ASCII), not localeCompare.
  return [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

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
