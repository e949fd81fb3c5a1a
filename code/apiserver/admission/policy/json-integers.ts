/**
 * JSON integers as CEL ints — the shim between objects as JSON.parse gives them and the CEL
 * library's values. Upstream needs none: its objects are Go values typed by their OpenAPI schema,
 * so `spec.replicas` is an int64 and `1.5` a double. Here every JSON number is a JavaScript
 * number, and @marcbachmann/cel-js reads a number as a CEL `double` and only a BigInt as an `int`.
 *
 * Solves: without it `object.spec.replicas + 1` fails (`no such overload: dyn<double> + int`) and
 * `string(object.spec.replicas)` prints `3` or `3.0` depending on the library's whim.
 *
 * Invariants:
 * - a number with no fractional part becomes a BigInt (int); any other stays a number (double);
 *   a whole number written `2.0` in the JSON also becomes an int (JSON.parse cannot tell them
 *   apart — upstream's schema would say double);
 * - the input is not modified: the result is a new tree (the object is still to be stored);
 * - `fromCEL` turns values back (BigInt → number) for anything that leaves CEL (messages are
 *   strings already; this is for tests and audit values).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/cel/types.go (the int/double distinction CEL keeps and JSON does not)
 * @chapter 03-api-security
 */

// #region to-cel
export function toCEL(value: unknown): unknown {
  if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCEL);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = toCEL(v);
    return out;
  }
  return value;
}
// #endregion to-cel

export function fromCEL(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(fromCEL);
  if (
    value !== null &&
    typeof value === "object" &&
    !(value instanceof Uint8Array) &&
    !(value instanceof Date)
  ) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromCEL(v)]));
  }
  return value;
}
