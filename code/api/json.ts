/**
 * Reading untyped JSON safely — the few accessors validation and defaulting use to walk an
 * object that a client sent and that may have any shape. Upstream has no such file: Go decodes a
 * body into typed structs, and a wrong JSON type fails decoding with a 400 before validation runs.
 *
 * Solves:
 * - the API server must answer bad input with a Status error, never crash: a `containers`
 *   that is a string, a `ports` entry that is null, must read as "absent" here so that
 *   validation reports the missing field instead of throwing a TypeError.
 *
 * Invariants:
 * - every accessor returns a value of the asked type or a neutral one (`undefined`, `[]`),
 *   never throws, never copies.
 *
 * @upstream none — Go's typed decoding does this job upstream
 * @chapter 02-apiserver
 */

export type JSONObject = Record<string, unknown>;

/** The value as a JSON object, or undefined for anything else (absent, null, array, scalar). */
export function obj(value: unknown): JSONObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as JSONObject)
    : undefined;
}

/** The value as an array, or an empty one. */
export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The value as a string, or "" (Go's zero value for a string field). */
export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** The value as a number, or 0 (Go's zero value for an int field). */
export function num(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

/** Present and not null: Go's "non-nil pointer". */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null;
}
