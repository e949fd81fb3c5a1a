/**
 * Patch errors — how a failed patch becomes a Kubernetes Status, in upstream's words: the
 * messages of apimachinery's util/mergepatch/errors.go, and the HTTP answer the PATCH handler
 * (k8s.io/apiserver's handlers/patch.go) gives each one.
 *
 * Solves:
 * - the three patch libraries fail with plain Go errors ("invalid patch format of retainKeys",
 *   "add operation does not apply: …"), and the PATCH handler decides which HTTP answer each one
 *   becomes: a malformed patch is 400 BadRequest, a JSON patch that does not apply is 422 Invalid
 *   with a fixed message, anything else is a 500 whose message is the library's error (we answer
 *   those 400: the patch is the client's mistake);
 * - the libraries print Go values with `%v` (`map[image:nginx]`), and the messages must read the same.
 *
 * Invariants:
 * - every error a patch function throws is a StatusError; the library-level error, when there is
 *   one, is kept as the StatusError's `cause` (upstream drops it for 422; we keep it for debugging).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/mergepatch/errors.go (ErrBadJSONDoc, ErrNoListOfLists, ErrBadPatchFormatForPrimitiveList, ErrBadPatchFormatForRetainKeys, ErrBadPatchFormatForSetElementOrderList, ErrPatchContentNotMatchRetainKeys, ErrUnsupportedStrategicMergePatchFormat, ErrNoMergeKey, ErrBadArgType, ErrBadPatchType)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (interpretStrategicMergePatchError)
 * @chapter 02-apiserver
 */

import { errorToAPIStatus, newBadRequest, newGenericServerResponse, StatusError } from "../errors.ts";

// #region mergepatch-errors
/** A failure inside the strategic merge patch library; `message` is upstream's text. */
export class MergePatchError extends Error {
  override readonly name = "MergePatchError";
}

export const errBadJSONDoc = "invalid JSON document";
export const errNoListOfLists = "lists of lists are not supported";
export const errBadPatchFormatForPrimitiveList = "invalid patch format of primitive list";
export const errBadPatchFormatForRetainKeys = "invalid patch format of retainKeys";
export const errBadPatchFormatForSetElementOrderList = "invalid patch format of setElementOrder list";
export const errPatchContentNotMatchRetainKeys = "patch content doesn't match retainKeys list";
export const errUnsupportedStrategicMergePatchFormat = "strategic merge patch format is not supported";

export const errNoMergeKey = (m: unknown, key: string): MergePatchError =>
  new MergePatchError(`map: ${goFormat(m)} does not contain declared merge key: ${key}`);

export const errBadArgType = (expected: string, actual: unknown): MergePatchError =>
  new MergePatchError(`expected a ${expected}, but received a ${goTypeName(actual)}`);

export const errBadPatchType = (t: unknown, m: unknown): MergePatchError =>
  new MergePatchError(`unknown patch type: ${goFormatString(t)} in map: ${goFormat(m)}`);
// #endregion mergepatch-errors

// #region interpret
/**
 * interpretStrategicMergePatchError: the handler's table from library error to HTTP answer.
 * Malformed directives are the client's fault (400); a list of lists or retainKeys mismatch is
 * 422 with NewGenericServerResponse's fixed text; anything else is not a Status at all, so
 * upstream's ErrorToAPIStatus turns it into a 500 with an empty reason and the error's text — we
 * answer the library's other errors with 400 BadRequest and the same text (see below).
 */
export function interpretStrategicMergePatchError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const message = err instanceof Error ? err.message : String(err);
  switch (message) {
    case errBadJSONDoc:
    case errBadPatchFormatForPrimitiveList:
    case errBadPatchFormatForRetainKeys:
    case errBadPatchFormatForSetElementOrderList:
    case errUnsupportedStrategicMergePatchFormat:
      return withCause(newBadRequest(message), err);
    case errNoListOfLists:
    case errPatchContentNotMatchRetainKeys:
      return newUnprocessableEntity(err);
    default:
      // Upstream answers 500 here (ErrorToAPIStatus of a plain error), though the error is the
      // patch's: a merge key missing, `$patch: explode`, a list of mixed types. A client's mistake
      // is a 400 with the library's words; only an error that is not the library's stays a 500.
      return err instanceof MergePatchError
        ? withCause(newBadRequest(message), err)
        : withCause(errorToAPIStatus(err), err);
  }
}
// #endregion interpret

/**
 * NewGenericServerResponse(422, "", GroupResource{}, "", err, 0, false), as the PATCH handler answers
 * a patch that does not apply: reason Invalid and a fixed message — upstream does not pass the
 * library's words to the client (they stay in our `cause`).
 */
export function newUnprocessableEntity(cause: unknown): StatusError {
  const message = cause instanceof Error ? cause.message : String(cause);
  return withCause(
    newGenericServerResponse(422, "", { group: "", resource: "" }, "", message, 0, false),
    cause,
  );
}

/** Keeps the library's error on the StatusError for debugging; not enumerable, so never sent. */
export function withCause(e: StatusError, cause: unknown): StatusError {
  if (cause !== undefined && cause !== e)
    Object.defineProperty(e, "cause", { value: cause, enumerable: false });
  return e;
}

// #region go-format
/** The name Go's reflect prints for a decoded JSON value: what ErrBadArgType shows. */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return "%!s(<nil>)";
  if (Array.isArray(v)) return "[]interface {}";
  switch (typeof v) {
    case "string":
      return "string";
    case "number":
      return Number.isInteger(v) ? "int64" : "float64";
    case "boolean":
      return "bool";
    default:
      return "map[string]interface {}";
  }
}

/** Go's `%v` of a decoded JSON value: `map[a:1 b:[x y]]`, keys sorted, strings bare, null `<nil>`. */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (Array.isArray(v)) return `[${v.map(goFormat).join(" ")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(o[k])}`).join(" ")}]`;
  }
  return String(v);
}

/** Go's `%s`: a string as is, anything else as fmt's complaint (`%!s(float64=1)`). */
function goFormatString(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "%!s(<nil>)";
  return `%!s(${goTypeName(v)}=${goFormat(v)})`;
}
// #endregion go-format
