/**
 * Decoded JSON values, handled as data — what every patch library here reads and writes. Upstream
 * has no such file: Go's decoded maps cannot be tricked by a key, JavaScript objects can.
 *
 * Solves:
 * - a client controls every key of a patch, including `__proto__`: read through `obj[k]` and it
 *   is Object.prototype, write through `obj[k] = v` and the object's prototype changes; a merge
 *   that then recurses would write into Object.prototype for the whole process. Go maps have no
 *   such key; here every read and write of a client-chosen key goes through getOwn/setOwn;
 * - equality of decoded values (object key order does not matter, list order does), as a test
 *   (jsonEqual) or as a canonical text to compare (canonicalJSON);
 * - Go's decoding errors name the JSON type they met (`cannot unmarshal bool into …`), in Go's
 *   words, not JavaScript's (jsonTypeName).
 *
 * Invariants:
 * - getOwn never returns an inherited property; setOwn always creates an own, enumerable property.
 *
 * @upstream none — Go's map[string]interface{} has no prototype; this is the TypeScript guard.
 * @chapter 02-apiserver
 */

export type JSONObject = Record<string, unknown>;

export function isJSONObject(v: unknown): v is JSONObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `obj[k]` if `k` is the object's own key, else undefined. */
export function getOwn(obj: JSONObject, k: string): unknown {
  return Object.hasOwn(obj, k) ? obj[k] : undefined;
}

/** `obj[k] = v`, as an own data property even for `__proto__`. */
export function setOwn(obj: JSONObject, k: string, v: unknown): void {
  if (k === "__proto__")
    Object.defineProperty(obj, k, { value: v, writable: true, enumerable: true, configurable: true });
  else obj[k] = v;
}

/** Structural equality of decoded JSON values (object key order does not matter). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ao = a as JSONObject;
  const bo = b as JSONObject;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.hasOwn(bo, k) && jsonEqual(ao[k], bo[k]));
}

/** JSON with sorted keys, undefined fields left out: equal objects give equal strings. */
export function canonicalJSON(v: unknown): string {
  return JSON.stringify(v, (_k, val) =>
    val && typeof val === "object" && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : val,
  );
}

/** The JSON type encoding/json's UnmarshalTypeError names: object, array, string, number, bool. */
export function jsonTypeName(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (typeof v === "boolean") return "bool";
  return typeof v; // "object" (null included), "string", "number"
}
