/**
 * JSON patch (RFC 6902) — a list of operations, each aimed at one place in the object. Upstream's
 * PATCH handler (jsonPatcher in k8s.io/apiserver's handlers/patch.go) runs it with the Go library
 * evanphx/json-patch v4, whose behaviour this file follows.
 *
 * `Content-Type: application/json-patch+json`; operations `add`, `remove`, `replace`, `move`,
 * `copy`, `test`, each addressing a place with a JSON pointer (RFC 6901:
 * `/spec/containers/0/image`, `-` for the end of a list, `~1` for `/`, `~0` for `~`).
 *
 * Solves:
 * - a client that knows exactly where a value sits can change it without sending the object,
 *   and can make the change conditional (`test` first: the whole patch fails if the value moved);
 * - the patch is applied as a unit: one failing operation fails the request and nothing is stored.
 *
 * Invariants:
 * - behaves as the library upstream uses (gopkg.in/evanphx/json-patch.v4, v4.12.0), quirks
 *   included: `replace` of a missing object key adds it, negative array indices count from the
 *   end, `add` without `value` stores null, `replace` at the root with a scalar does nothing;
 * - the input document is never mutated;
 * - failures are what the PATCH handler answers: a patch that is not a list of objects is 400
 *   BadRequest with Go's decoding message; more than 10000 operations is 413; an operation that
 *   does not apply is 422 Invalid "the server rejected our request due to an error in our request"
 *   (upstream hides the library's message; ours keeps it as the error's `cause`).
 *
 * Differences: the library compares `test` values as raw JSON bytes (`1` and `1.0` differ); we
 * compare decoded values, where they are equal.
 *
 * @upstream evanphx/json-patch patch.go (Patch.Apply, findObject, partialDoc, partialArray, decodePatchKey; tag v4.12.0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (jsonPatcher.applyJSPatch, maxJSONPatchOperations)
 * @chapter 02-apiserver
 */

import { newBadRequest, newRequestEntityTooLargeError } from "../errors.ts";
import { newUnprocessableEntity } from "./errors.ts";
import { jsonEqual, jsonTypeName, setOwn } from "./json-value.ts";

/** One operation as sent; fields are checked when the operation runs, as upstream does. */
export interface Operation {
  op?: unknown;
  path?: unknown;
  from?: unknown;
  value?: unknown;
}

/** A failure inside the JSON patch library; `message` is evanphx/json-patch's text. */
export class JSONPatchError extends Error {
  override readonly name = "JSONPatchError";
}

/** maxJSONPatchOperations in the PATCH handler. */
export const maxJSONPatchOperations = 10000;

// #region apply-json-patch
/**
 * Apply a JSON patch the way the PATCH handler does: decode checks, the operation limit, then
 * every operation in order on a copy of `doc`. Throws a StatusError.
 */
export function applyJSONPatch(doc: unknown, patch: unknown): unknown {
  const ops = decodePatch(patch);
  if (ops.length > maxJSONPatchOperations) {
    throw newRequestEntityTooLargeError(
      `The allowed maximum operations in a JSON patch is ${maxJSONPatchOperations}, got ${ops.length}`,
    );
  }
  try {
    return applyOperations(doc, ops);
  } catch (e) {
    if (e instanceof JSONPatchError) throw newUnprocessableEntity(e);
    throw e;
  }
}
// #endregion apply-json-patch

/** jsonpatch.DecodePatch: the body must be a JSON list of objects (null is an empty patch). */
export function decodePatch(patch: unknown): (Operation | null)[] {
  if (patch === null || patch === undefined) return [];
  if (!Array.isArray(patch)) {
    throw newBadRequest(
      `json: cannot unmarshal ${jsonTypeName(patch)} into Go value of type jsonpatch.Patch`,
    );
  }
  for (const op of patch) {
    if (op !== null && (typeof op !== "object" || Array.isArray(op))) {
      throw newBadRequest(
        `json: cannot unmarshal ${jsonTypeName(op)} into Go value of type jsonpatch.Operation`,
      );
    }
  }
  return patch as (Operation | null)[];
}

// #region operations
/**
 * Patch.Apply: run the operations in order on a deep copy of `doc`; the first failure throws a
 * JSONPatchError with the library's message and nothing of the partial result escapes.
 */
export function applyOperations(doc: unknown, ops: readonly (Operation | null)[]): unknown {
  const root: Holder = { doc: structuredClone(doc) };
  for (const raw of ops) {
    const op = raw ?? {};
    const kind = typeof op.op === "string" ? op.op : "unknown";
    switch (kind) {
      case "add":
        opAdd(root, op);
        break;
      case "remove":
        opRemove(root, op);
        break;
      case "replace":
        opReplace(root, op);
        break;
      case "move":
        opMove(root, op);
        break;
      case "test":
        opTest(root, op);
        break;
      case "copy":
        opCopy(root, op);
        break;
      default:
        throw new JSONPatchError(`Unexpected kind: ${kind}`);
    }
  }
  return root.doc;
}
// #endregion operations

/** The document lives in a holder so `replace` at path "" can swap it. */
interface Holder {
  doc: unknown;
}

type Container = Record<string, unknown> | unknown[];

const missing = "missing value";
const invalidIndex = "invalid index referenced";

function wrap(message: string, cause: string): JSONPatchError {
  return new JSONPatchError(`${message}: ${cause}`);
}

/** Operation.Path / Operation.From: the field as a string, or the error the library would give. */
function field(op: Operation, name: "path" | "from"): { value: string } | { err: string } {
  const v = op[name];
  if (v === undefined || v === null) {
    return {
      err:
        name === "path"
          ? `operation missing path field: ${missing}`
          : `operation, missing from field: ${missing}`,
    };
  }
  if (typeof v !== "string")
    return { err: `json: cannot unmarshal ${jsonTypeName(v)} into Go value of type string` };
  return { value: v };
}

/** An operation's `value`; absent or null both become null, as a nil lazyNode marshals. */
function opValue(op: Operation): unknown {
  return op.value === undefined ? null : structuredClone(op.value);
}

// #region find-object
/** RFC 6901 unescaping: `~1` first, then `~0`, in one left-to-right pass as strings.Replacer does. */
export function decodePatchKey(k: string): string {
  return k.replace(/~[01]/g, (m) => (m === "~1" ? "/" : "~"));
}

/**
 * findObject: walk every segment but the last, and return the container holding the last one and
 * its key. A path without a leading segment (`""`, `"a"`), a missing or null step, or a step
 * through a scalar finds nothing.
 */
function findObject(root: Holder, path: string): [Container, string] | undefined {
  const split = path.split("/");
  if (split.length < 2) return undefined;
  let doc = root.doc;
  if (!isContainer(doc)) return undefined;
  for (const part of split.slice(1, -1)) {
    let next: unknown;
    try {
      next = get(doc as Container, decodePatchKey(part));
    } catch {
      return undefined;
    }
    if (!isContainer(next)) return undefined;
    doc = next;
  }
  return [doc as Container, decodePatchKey(split[split.length - 1]!)];
}
// #endregion find-object

function isContainer(v: unknown): v is Container {
  return typeof v === "object" && v !== null;
}

/** strconv.Atoi: optional sign, decimal digits, nothing else. */
function atoi(key: string): number {
  if (!/^[+-]?[0-9]+$/.test(key))
    throw new JSONPatchError(`strconv.Atoi: parsing ${JSON.stringify(key)}: invalid syntax`);
  return Number.parseInt(key, 10);
}

function indexError(idx: number): JSONPatchError {
  return wrap(`Unable to access invalid index: ${idx}`, invalidIndex);
}

// #region containers
/** A key of an object, or an index of a list — negative from the end, as the library allows. */
function get(c: Container, key: string): unknown {
  if (!Array.isArray(c)) return Object.hasOwn(c, key) ? c[key] : undefined;
  let idx = atoi(key);
  if (idx < 0) {
    if (idx < -c.length) throw indexError(idx);
    idx += c.length;
  }
  if (idx >= c.length) throw indexError(idx);
  return c[idx];
}

/** Only used by replace, after get() proved the index exists. */
function set(c: Container, key: string, val: unknown): void {
  if (!Array.isArray(c)) {
    setOwn(c, key, val);
    return;
  }
  let idx = atoi(key);
  if (idx < 0) {
    if (idx < -c.length) throw indexError(idx);
    idx += c.length;
  }
  c[idx] = val;
}

function add(c: Container, key: string, val: unknown): void {
  if (!Array.isArray(c)) {
    setOwn(c, key, val);
    return;
  }
  if (key === "-") {
    c.push(val);
    return;
  }
  let idx: number;
  try {
    idx = atoi(key);
  } catch (e) {
    throw wrap(`value was not a proper array index: '${key}'`, (e as Error).message);
  }
  const size = c.length + 1;
  if (idx >= size) throw indexError(idx);
  if (idx < 0) {
    if (idx < -size) throw indexError(idx);
    idx += size;
  }
  c.splice(idx, 0, val);
}

function remove(c: Container, key: string): void {
  if (!Array.isArray(c)) {
    if (!Object.hasOwn(c, key)) throw wrap(`Unable to remove nonexistent key: ${key}`, missing);
    delete c[key];
    return;
  }
  let idx = atoi(key);
  if (idx >= c.length) throw indexError(idx);
  if (idx < 0) {
    if (idx < -c.length) throw indexError(idx);
    idx += c.length;
  }
  c.splice(idx, 1);
}
// #endregion containers

/** The library's message of a failed step; any other error is a bug of ours and goes on up. */
function message(e: unknown): string {
  if (e instanceof JSONPatchError) return e.message;
  throw e;
}

function opAdd(root: Holder, op: Operation): void {
  const path = field(op, "path");
  if ("err" in path) throw wrap("add operation failed to decode path", missing);
  const found = findObject(root, path.value);
  if (!found) throw wrap(`add operation does not apply: doc is missing path: "${path.value}"`, missing);
  try {
    add(found[0], found[1], opValue(op));
  } catch (e) {
    throw wrap(`error in add for path: '${path.value}'`, message(e));
  }
}

function opRemove(root: Holder, op: Operation): void {
  const path = field(op, "path");
  if ("err" in path) throw wrap("remove operation failed to decode path", missing);
  const found = findObject(root, path.value);
  if (!found) throw wrap(`remove operation does not apply: doc is missing path: "${path.value}"`, missing);
  try {
    remove(found[0], found[1]);
  } catch (e) {
    throw wrap(`error in remove for path: '${path.value}'`, message(e));
  }
}

function opReplace(root: Holder, op: Operation): void {
  const path = field(op, "path");
  if ("err" in path) throw wrap("replace operation failed to decode path", path.err);
  if (path.value === "") {
    // The library wraps a nil error here, which is nil: a scalar at the root is silently ignored.
    const val = opValue(op);
    if (isContainer(val)) root.doc = val;
    return;
  }
  const found = findObject(root, path.value);
  if (!found) throw wrap(`replace operation does not apply: doc is missing path: ${path.value}`, missing);
  try {
    get(found[0], found[1]);
  } catch {
    throw wrap(`replace operation does not apply: doc is missing key: ${path.value}`, missing);
  }
  try {
    set(found[0], found[1], opValue(op));
  } catch (e) {
    // "remove", not "replace": the library's own wording, kept so the messages match.
    throw wrap(`error in remove for path: '${path.value}'`, message(e));
  }
}

function opMove(root: Holder, op: Operation): void {
  const from = field(op, "from");
  if ("err" in from) throw wrap("move operation failed to decode from", from.err);
  const src = findObject(root, from.value);
  if (!src) throw wrap(`move operation does not apply: doc is missing from path: ${from.value}`, missing);
  let val: unknown;
  try {
    val = get(src[0], src[1]);
    remove(src[0], src[1]);
  } catch (e) {
    throw wrap(`error in move for path: '${src[1]}'`, message(e));
  }
  const path = field(op, "path");
  if ("err" in path) throw wrap("move operation failed to decode path", path.err);
  const dst = findObject(root, path.value);
  if (!dst)
    throw wrap(`move operation does not apply: doc is missing destination path: ${path.value}`, missing);
  try {
    add(dst[0], dst[1], val === undefined ? null : val);
  } catch (e) {
    throw wrap(`error in move for path: '${path.value}'`, message(e));
  }
}

function opTest(root: Holder, op: Operation): void {
  const path = field(op, "path");
  if ("err" in path) throw wrap("test operation failed to decode path", path.err);
  const failed = () => wrap(`testing value ${path.value} failed`, "test failed");
  if (path.value === "") {
    if (!jsonEqual(root.doc, op.value ?? null)) throw failed();
    return;
  }
  const found = findObject(root, path.value);
  if (!found) throw wrap(`test operation does not apply: is missing path: ${path.value}`, missing);
  let val: unknown;
  try {
    val = get(found[0], found[1]);
  } catch (e) {
    throw wrap(`error in test for path: '${path.value}'`, message(e));
  }
  // A missing key and a null both read as "nothing": they pass only against a null value.
  if (val === undefined || val === null) {
    if (op.value === null || op.value === undefined) return;
    throw failed();
  }
  if (op.value === undefined || !jsonEqual(val, op.value)) throw failed();
}

function opCopy(root: Holder, op: Operation): void {
  const from = field(op, "from");
  if ("err" in from) throw wrap("copy operation failed to decode from", from.err);
  const src = findObject(root, from.value);
  if (!src) throw wrap(`copy operation does not apply: doc is missing from path: ${from.value}`, missing);
  let val: unknown;
  try {
    val = get(src[0], src[1]);
  } catch (e) {
    throw wrap(`error in copy for from: '${from.value}'`, message(e));
  }
  const path = field(op, "path");
  if ("err" in path) throw wrap("copy operation failed to decode path", missing);
  const dst = findObject(root, path.value);
  if (!dst)
    throw wrap(`copy operation does not apply: doc is missing destination path: ${path.value}`, missing);
  try {
    add(dst[0], dst[1], val === undefined ? null : structuredClone(val));
  } catch (e) {
    throw wrap("error while adding value during copy", message(e));
  }
}
