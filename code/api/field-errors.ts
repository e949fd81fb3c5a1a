/**
 * Field errors — what is wrong with which field of an object, in upstream's words.
 * Upstream: apimachinery's pkg/util/validation/field (errors.go, path.go).
 *
 * Solves:
 * - validation reports every problem at once, each tied to a field path
 *   (`spec.containers[0].image: Required value`), so `kubectl apply` shows them all;
 * - the API server turns a list of them into one 422 `Invalid` Status whose `details.causes`
 *   keep each error's reason, field and message apart for programs.
 *
 * Invariants:
 * - `toString()` is upstream's `Error()`: `<field>: <type>[: <bad value>][: <detail>]`, where a
 *   string bad value is quoted and Required/Forbidden/TooLong/Internal never print the value;
 * - a map or struct bad value that upstream prints with Go's `%#v`
 *   (`map[string]string{"app":"web"}`) travels as a GoValue carrying that exact text.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go (Error, ErrorType, Required, Invalid, NotSupported, Duplicate, Forbidden, TooLong, ErrorList)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/field/path.go (Path)
 * @chapter 02-apiserver
 */

/** The `reason` a Status cause carries, and the words the message uses for it. */
export const errorTypes = {
  FieldValueNotFound: "Not found",
  FieldValueRequired: "Required value",
  FieldValueDuplicate: "Duplicate value",
  FieldValueInvalid: "Invalid value",
  FieldValueNotSupported: "Unsupported value",
  FieldValueForbidden: "Forbidden",
  FieldValueTooLong: "Too long",
  FieldValueTooMany: "Too many",
  InternalError: "Internal error",
  FieldValueTypeInvalid: "Invalid value",
} as const;

export type ErrorType = keyof typeof errorTypes;

export interface FieldError {
  type: ErrorType;
  /** The field's path, as `path.ts` would print it: `spec.containers[0].name`. */
  field: string;
  badValue?: unknown;
  detail?: string;
}

/** Types whose message never shows the bad value (upstream's ErrorBody). */
const valueHidden = new Set<ErrorType>([
  "FieldValueRequired",
  "FieldValueForbidden",
  "FieldValueTooLong",
  "InternalError",
]);

/** The message without the field: what a Status cause's `message` holds. */
export function errorBody(e: FieldError): string {
  let s: string = errorTypes[e.type];
  if (!valueHidden.has(e.type) && e.badValue !== undefined) s += `: ${formatValue(e.badValue)}`;
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

export function fieldErrorToString(e: FieldError): string {
  return `${e.field}: ${errorBody(e)}`;
}

function formatValue(v: unknown): string {
  if (v === null) return "null";
  if (v instanceof GoValue) return v.text;
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

// One constructor per upstream function (field.Required, field.Invalid, …): a validator names the
// problem and the field; the words come from here, so every message is spelled one way.
export const required = (field: string, detail = ""): FieldError => ({
  type: "FieldValueRequired",
  field,
  detail,
});
export const invalid = (field: string, badValue: unknown, detail = ""): FieldError => ({
  type: "FieldValueInvalid",
  field,
  badValue,
  detail,
});
export const forbidden = (field: string, detail: string): FieldError => ({
  type: "FieldValueForbidden",
  field,
  detail,
});
export const duplicate = (field: string, badValue: unknown): FieldError => ({
  type: "FieldValueDuplicate",
  field,
  badValue,
});
export const notFound = (field: string, badValue: unknown): FieldError => ({
  type: "FieldValueNotFound",
  field,
  badValue,
});
/** v1.32's wording (later releases say "must have at most N bytes"); the value is never shown. */
export const tooLong = (field: string, maxLength: number): FieldError => ({
  type: "FieldValueTooLong",
  field,
  detail: maxLength >= 0 ? `may not be more than ${maxLength} bytes` : "value is too long",
});
export const tooMany = (field: string, actual: number, max: number): FieldError => ({
  type: "FieldValueTooMany",
  field,
  badValue: actual,
  detail: max >= 0 ? `must have at most ${max} items` : "has too many items",
});
export const internalError = (field: string, detail: string): FieldError => ({
  type: "InternalError",
  field,
  detail,
});
/** `supported values: "Always", "Never", "OnFailure"` — upstream quotes and lists them in the order given. */
export const notSupported = (field: string, badValue: unknown, supported: readonly string[]): FieldError => ({
  type: "FieldValueNotSupported",
  field,
  badValue,
  detail: supported.length ? `supported values: ${supported.map((s) => JSON.stringify(s)).join(", ")}` : "",
});

// #region field-path
/**
 * Field paths as upstream's field.Path prints them: `spec.containers[0].ports[1].name`,
 * `metadata.labels` and, for map keys, `data[my.key]` (the key is not quoted).
 */
export function childPath(parent: string, ...names: string[]): string {
  let path = parent;
  for (const name of names) path = path === "" ? name : `${path}.${name}`;
  return path;
}
export const indexPath = (parent: string, index: number): string => `${parent}[${index}]`;
export const keyPath = (parent: string, key: string): string => `${parent}[${key}]`;
// #endregion field-path

/**
 * A bad value that upstream prints with Go's `%#v` (a map, a struct) or a Stringer (a time):
 * `text` is what the message shows, `value` what a program gets (in a Status cause, as JSON).
 * Any other bad value prints as formatValue does: strings quoted, numbers and booleans bare,
 * anything else as JSON.
 */
export class GoValue {
  constructor(
    readonly text: string,
    readonly value: unknown,
  ) {}
  toJSON(): unknown {
    return this.value;
  }
}

/** Go's `%#v` of a map[string]string: `map[string]string{"app":"web", "tier":"fe"}`, keys sorted; nil as `map[string]string(nil)`. */
export function goStringMap(map: Record<string, string> | undefined | null): GoValue {
  if (map === undefined || map === null) return new GoValue("map[string]string(nil)", map ?? null);
  const entries = Object.keys(map)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(map[key])}`);
  return new GoValue(`map[string]string{${entries.join(", ")}}`, map);
}

/** Go's `%#v` of a []string: `[]string{"a", "b"}`; absent (nil) as `[]string(nil)`, empty as `[]string{}`. */
export function goStringSlice(values: readonly string[] | undefined): GoValue {
  if (!values) return new GoValue("[]string(nil)", null);
  return new GoValue(`[]string{${values.map((v) => JSON.stringify(v)).join(", ")}}`, values);
}

/** Upstream's utilerrors aggregate: one message alone, several as `[a, b]` (duplicates dropped). */
export function aggregateMessage(errs: readonly FieldError[]): string {
  const messages = [...new Set(errs.map(fieldErrorToString))];
  return messages.length === 1 ? messages[0]! : `[${messages.join(", ")}]`;
}
