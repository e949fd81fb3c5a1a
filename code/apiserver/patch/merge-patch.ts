/**
 * JSON merge patch (RFC 7386) — a partial object merged into the stored one; `null` deletes.
 * Upstream's PATCH handler (jsonPatcher in k8s.io/apiserver's handlers/patch.go) runs it with
 * evanphx/json-patch's MergePatch, whose behaviour this file follows.
 *
 * `Content-Type: application/merge-patch+json`: send the parts of the object you want changed,
 * shaped like the object.
 *
 * Solves:
 * - the simplest partial update: `{"metadata":{"labels":{"tier":"web"}}}` adds one label and keeps
 *   the rest, with no knowledge of the object's schema;
 * - the price of schema-blindness: a list is a value like any other, so sending `containers`
 *   replaces the whole list (strategic merge patch exists to fix exactly that).
 *
 * Invariants:
 * - objects merge key by key, recursively; anything else in the patch (scalar, list) replaces;
 * - as upstream's library (evanphx/json-patch v4.12.0 MergePatch), nulls are pruned from a value
 *   that lands where nothing was (or where a non-object was) — also inside objects in lists — but
 *   a list replacing an object keeps its nulls;
 * - `doc` is never mutated.
 *
 * Errors, as the PATCH handler answers them: a null or scalar patch is 400 BadRequest
 * "Invalid JSON Patch" (jsonpatch.ErrBadJSONPatch); a list patch makes the library return a list,
 * which cannot decode into an object: we answer 422 Invalid on field `patch` (upstream's message
 * carries the Go decoder's words, which we do not reproduce).
 *
 * @upstream evanphx/json-patch merge.go (MergePatch, doMergePatch, mergeDocs, pruneNulls; tag v4.12.0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (jsonPatcher.applyJSPatch)
 * @chapter 02-apiserver
 */

import { invalid } from "../../api/field-errors.ts";
import { newBadRequest, newInvalid } from "../errors.ts";
import { getOwn, isJSONObject as isObject, type JSONObject, setOwn } from "./json-value.ts";

/** jsonpatch.ErrBadJSONPatch. */
export const errBadJSONPatch = "Invalid JSON Patch";

// #region apply-merge-patch
/** Apply a JSON merge patch to an object, as the PATCH handler does. Throws a StatusError. */
export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  if (Array.isArray(patch)) {
    const result = pruneAryNulls(structuredClone(patch));
    throw newInvalid("", "", "", [
      invalid("patch", JSON.stringify(result), "cannot restore object from a JSON list"),
    ]);
  }
  if (!isObject(patch)) throw newBadRequest(errBadJSONPatch);
  const target = isObject(doc) ? structuredClone(doc) : {};
  mergeDocs(target, structuredClone(patch));
  return target;
}
// #endregion apply-merge-patch

// #region merge-docs
/** Merge `patch` into `doc` in place: null deletes, objects recurse, everything else replaces. */
function mergeDocs(doc: JSONObject, patch: JSONObject): void {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete doc[k];
      continue;
    }
    const cur = getOwn(doc, k);
    if (cur === undefined || cur === null) {
      // Nothing to merge into: the value lands as is, minus the nulls that would mean "delete".
      pruneNulls(v);
      setOwn(doc, k, v);
    } else {
      setOwn(doc, k, merge(cur, v));
    }
  }
}

function merge(cur: unknown, patch: unknown): unknown {
  if (!isObject(cur)) {
    pruneNulls(patch);
    return patch;
  }
  // An object replaced by a non-object: the library returns the patch value untouched.
  if (!isObject(patch)) return patch;
  mergeDocs(cur, patch);
  return cur;
}
// #endregion merge-docs

function pruneNulls(n: unknown): void {
  if (isObject(n)) pruneDocNulls(n);
  else if (Array.isArray(n)) pruneAryNulls(n);
}

function pruneDocNulls(doc: JSONObject): JSONObject {
  for (const [k, v] of Object.entries(doc)) {
    if (v === null) delete doc[k];
    else pruneNulls(v);
  }
  return doc;
}

/** Nulls in a list stay (they are values, not deletions); objects inside it are pruned. */
function pruneAryNulls(ary: unknown[]): unknown[] {
  for (const v of ary) if (v !== null) pruneNulls(v);
  return ary;
}
