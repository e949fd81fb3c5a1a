/**
 * Strategic merge patch — a merge patch that merges lists item by item, by key, as the schema says.
 * Upstream: StrategicMergeMapPatch in apimachinery's util/strategicpatch/patch.go, which the PATCH
 * handler (k8s.io/apiserver's handlers/patch.go) calls; this file follows its algorithm and messages.
 *
 * `Content-Type: application/strategic-merge-patch+json`, `kubectl patch`'s default: it knows, from
 * the schema, which lists are sets of items with an identity (containers by `name`) and merges them
 * item by item instead of replacing them.
 *
 * Solves:
 * - `kubectl patch pod web -p '{"spec":{"containers":[{"name":"app","image":"v2"}]}}'` changes one
 *   container's image and keeps the sidecar — with a plain merge patch the sidecar would vanish;
 * - what a merge patch cannot say, directives say:
 *   - `$patch: delete` in a list item removes the item with that key; in a map, empties the map;
 *   - `$patch: replace` in a list item replaces the whole list by the other items; in a map,
 *     replaces the map by the rest of it;
 *   - `$deleteFromPrimitiveList/<field>: [...]` removes values from a merged list of scalars;
 *   - `$setElementOrder/<field>: [...]` gives the final order of a merged list (kubectl apply
 *     sends it so the live order follows the file);
 *   - `$retainKeys: [...]` (on retainKeys fields: volumes, a Deployment's strategy) clears every
 *     key of the live map it does not name, so a union switches members cleanly.
 *
 * Invariants:
 * - maps merge recursively; `null` deletes a key (and a null for a key that is not there is
 *   dropped); a value of another type replaces; a value that lands where nothing was is stored
 *   without its nulls and without `$patch` maps (upstream's discardNullValuesFromPatch and
 *   removeDirectives, which kubectl v1.32 has); a list merges only if its field says
 *   `patchStrategy: merge` (patch-meta.ts), otherwise it is replaced;
 * - merged lists of scalars are unions (deduplicated); merged lists of objects match items by
 *   the merge key, merge matched items recursively and append new ones;
 * - order of a merged list: items named in the patch in the patch's (or $setElementOrder's)
 *   order, the live-only items in their live order, interleaved as upstream's
 *   normalizeElementOrder/mergeSortedSlice do;
 * - `doc` and `patch` are never mutated.
 *
 * Kinds: upstream reads the tags from the Go type of the resource. For a type without Go structs
 * (custom resources) the API server refuses strategic merge patch with a 415 — there is no
 * fallback to merge patch semantics. Every kind we serve has its table in patch-meta.ts (a test
 * checks it); for any other kind we throw the library's own 400, "strategic merge patch format is
 * not supported".
 *
 * Differences from upstream:
 * - upstream then decodes the result into the Go type, which drops unknown fields; we do not
 *   know every field, so we only drop what no Go field can hold (pruneAsDecoded: leftover
 *   `$…` keys, e.g. in an appended list item, and null fields);
 * - Go iterates the patch map in random order; we follow the patch's key order (it matters only
 *   when a list and its `$deleteFromPrimitiveList` both name the same value);
 * - a field missing from patch-meta.ts is treated as untagged; upstream fails with "unable to
 *   find api field" when a stored object has a field its Go type lacks (ours cannot, as typed).
 * - Go sorts with sort.SliceStable, whose comparator here is not a strict order when an item is
 *   missing from the order list; we reproduce its insertion sort exactly for lists up to 20
 *   items (Go's block size) and use a plain stable sort above that.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (StrategicMergeMapPatch, mergeMap, mergePatchIntoOriginal, applyRetainKeysDirective, mergeSlice, mergeSliceWithSpecialElements, mergeSliceWithoutSpecialElements, normalizeElementOrder, mergeSortedSlice, deduplicateScalars, deleteFromSlice)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (strategicPatchObject, applyPatchToObject)
 * @chapter 02-apiserver
 */

import { newBadRequest } from "../errors.ts";
import {
  errBadArgType,
  errBadPatchFormatForPrimitiveList,
  errBadPatchFormatForRetainKeys,
  errBadPatchFormatForSetElementOrderList,
  errBadPatchType,
  errNoListOfLists,
  errNoMergeKey,
  errUnsupportedStrategicMergePatchFormat,
  goFormat,
  interpretStrategicMergePatchError,
  MergePatchError,
} from "./errors.ts";
import { isJSONObject as isMap, jsonTypeName, setOwn } from "./json-value.ts";
import { lookupField, lookupKind, type StructMeta, splitStrategy } from "./patch-meta.ts";

const directiveMarker = "$patch";
const deleteDirective = "delete";
const replaceDirective = "replace";
const mergeDirective = "merge";
const retainKeysDirective = "$retainKeys";
const deleteFromPrimitiveListDirectivePrefix = "$deleteFromPrimitiveList";
const setElementOrderDirectivePrefix = "$setElementOrder";

type JSONMap = Record<string, unknown>;

/** MergeOptions; the API server always merges parallel lists and ignores unmatched nulls. */
interface MergeOptions {
  mergeParallelList: boolean;
  ignoreUnmatchedNulls: boolean;
}

const serverOptions: MergeOptions = { mergeParallelList: true, ignoreUnmatchedNulls: true };

// #region apply-strategic-merge-patch
/**
 * Apply a strategic merge patch to an object of the given kind, as the PATCH handler does.
 * Throws a StatusError (400 for a malformed patch or directive, 422 for lists of lists, 500 with
 * the library's message for anything else, as upstream).
 */
export function applyStrategicMergePatch(
  doc: unknown,
  patch: unknown,
  apiVersion: string,
  kind: string,
): unknown {
  const schema = lookupKind(apiVersion, kind);
  if (!schema) throw newBadRequest(errUnsupportedStrategicMergePatchFormat);
  // The handler decodes the body into a map: a list or scalar body is a decoding error; null is {}.
  if (patch === null || patch === undefined) return structuredClone(doc);
  if (!isMap(patch)) {
    throw newBadRequest(
      `json: cannot unmarshal ${jsonTypeName(patch)} into Go value of type map[string]interface {}`,
    );
  }
  const original = isMap(doc) ? doc : {};
  try {
    return pruneAsDecoded(strategicMergeMapPatch(original, patch, schema));
  } catch (e) {
    throw interpretStrategicMergePatchError(e);
  }
}
// #endregion apply-strategic-merge-patch

/** Whether patch-meta.ts describes this kind, as upstream's handler asks before its 415. */
export function supportsStrategicMergePatch(apiVersion: string, kind: string): boolean {
  return lookupKind(apiVersion, kind) !== undefined;
}

/**
 * StrategicMergeMapPatch: the library, on copies of its inputs. Throws MergePatchError with
 * upstream's messages. Keeps leftover directive keys, as the library does (kubectl --local shows them).
 */
export function strategicMergeMapPatch(original: JSONMap, patch: JSONMap, schema: StructMeta): JSONMap {
  return mergeMap(structuredClone(original), structuredClone(patch), schema, serverOptions);
}

/** reflect.TypeOf for decoded JSON: what mergeMap compares to decide merge versus replace. */
function goType(v: unknown): string {
  if (v === null || v === undefined) return "nil";
  if (Array.isArray(v)) return "slice";
  if (typeof v === "object") return "map";
  if (typeof v === "number") return Number.isInteger(v) ? "int64" : "float64";
  return typeof v;
}

// #region merge-map
/**
 * mergeMap: merge `patch` into `original` (both mutated; callers pass copies). Directives first:
 * `$patch` decides for the whole map, `$retainKeys` clears keys, `$setElementOrder` lists are
 * merged with their lists; then every remaining key.
 */
function mergeMap(
  original: JSONMap | null,
  patch: JSONMap,
  t: StructMeta | undefined,
  opts: MergeOptions,
): JSONMap {
  if (Object.hasOwn(patch, directiveMarker)) return handleDirectiveInMergeMap(patch[directiveMarker], patch);
  const orig = original ?? {};
  applyRetainKeysDirective(orig, patch, opts);
  mergePatchIntoOriginal(orig, patch, t, opts);

  for (let [k, patchV] of Object.entries(patch)) {
    let isDeleteList = false;
    if (k.startsWith(deleteFromPrimitiveListDirectivePrefix)) {
      if (!opts.mergeParallelList) {
        setOwn(orig, k, patchV);
        continue;
      }
      k = extractKey(k, deleteFromPrimitiveListDirectivePrefix);
      isDeleteList = true;
    }
    if (patchV === null) {
      delete orig[k];
      if (opts.ignoreUnmatchedNulls) continue;
    }
    const origType = Object.hasOwn(orig, k) ? goType(orig[k]) : "absent";
    if (origType === "absent" || origType !== goType(patchV)) {
      // Nothing to merge with: the patch value is taken, cleaned of what only a patch can say
      // (nulls, `$patch` maps). A deletion list for an absent list deletes nothing.
      if (!isDeleteList) takePatchValue(orig, k, patchV, opts);
      continue;
    }
    const meta = lookupField(t, k);
    const { strategy } = splitStrategy(meta.patchStrategy);
    if (origType === "map") {
      setOwn(
        orig,
        k,
        strategy !== replaceDirective
          ? mergeMap(orig[k] as JSONMap, patchV as JSONMap, meta.type, opts)
          : patchV,
      );
    } else if (origType === "slice") {
      const list = orig[k] as unknown[];
      setOwn(
        orig,
        k,
        mergeSliceHandler(
          list,
          patchV as unknown[],
          meta.type,
          strategy,
          meta.patchMergeKey ?? "",
          isDeleteList,
          opts,
        ),
      );
    } else {
      takePatchValue(orig, k, patchV, opts);
    }
  }
  return orig;
}

/** Store a patch value where there is nothing to merge: no nulls, no `$patch` maps (removeDirectives). */
function takePatchValue(orig: JSONMap, k: string, patchV: unknown, opts: MergeOptions): void {
  if (opts.ignoreUnmatchedNulls) discardNullValuesFromPatch(patchV);
  const [v, keep] = removeDirectives(patchV);
  if (keep) setOwn(orig, k, v);
  else delete orig[k];
}

/** discardNullValuesFromPatch: a null where nothing exists means nothing; drop it at every depth. */
function discardNullValuesFromPatch(v: unknown): void {
  if (Array.isArray(v)) {
    for (const item of v) discardNullValuesFromPatch(item);
  } else if (isMap(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (x === null) delete v[k];
      else discardNullValuesFromPatch(x);
    }
  }
}

/**
 * removeDirectives: a map carrying `$patch` is an instruction, not a value — drop it (from lists
 * too); returns the cleaned value and whether to keep the field at all.
 */
function removeDirectives(v: unknown): [unknown, boolean] {
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const item of v) {
      const [x, keep] = removeDirectives(item);
      if (keep) out.push(x);
    }
    return [out, true];
  }
  if (isMap(v)) {
    if (Object.hasOwn(v, directiveMarker)) return [null, false];
    for (const [k, x] of Object.entries(v)) {
      const [y, keep] = removeDirectives(x);
      if (keep) v[k] = y;
      else delete v[k];
    }
  }
  return [v, true];
}

/** `$patch` in a map: replace → the rest of the patch is the map; delete → an empty map. */
function handleDirectiveInMergeMap(directive: unknown, patch: JSONMap): JSONMap {
  if (directive === replaceDirective) {
    delete patch[directiveMarker];
    return patch;
  }
  if (directive === deleteDirective) return {};
  throw errBadPatchType(directive, patch);
}
// #endregion merge-map

/** "$setElementOrder/containers" → "containers"; a key without the slash is a malformed directive. */
function extractKey(s: string, prefix: string): string {
  const slash = s.indexOf("/");
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    throw new MergePatchError(
      prefix === deleteFromPrimitiveListDirectivePrefix
        ? errBadPatchFormatForPrimitiveList
        : errBadPatchFormatForSetElementOrderList,
    );
  }
  return s.slice(slash + 1);
}

// #region retain-keys
/**
 * applyRetainKeysDirective: every key the patch sets must be in the list (a patch cannot set a
 * member it asks to drop), and every live key not in the list goes.
 */
function applyRetainKeysDirective(original: JSONMap, patch: JSONMap, opts: MergeOptions): void {
  if (!Object.hasOwn(patch, retainKeysDirective)) return;
  const retainKeys = patch[retainKeysDirective];
  delete patch[retainKeysDirective];
  if (!opts.mergeParallelList) {
    original[retainKeysDirective] = retainKeys;
    return;
  }
  if (!Array.isArray(retainKeys)) throw new MergePatchError(errBadPatchFormatForRetainKeys);
  const keep = new Set<unknown>(retainKeys);
  for (const [k, v] of Object.entries(patch)) {
    if (
      v === null ||
      k.startsWith(deleteFromPrimitiveListDirectivePrefix) ||
      k.startsWith(setElementOrderDirectivePrefix)
    ) {
      continue;
    }
    if (!keep.has(k)) throw new MergePatchError(errBadPatchFormatForRetainKeys);
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}
// #endregion retain-keys

// #region set-element-order
/**
 * mergePatchIntoOriginal: for each `$setElementOrder/<field>`, merge the field's list now and put
 * it in the given order (the directive outranks the patch's own order, which outranks live order).
 */
function mergePatchIntoOriginal(
  original: JSONMap,
  patch: JSONMap,
  t: StructMeta | undefined,
  opts: MergeOptions,
): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(setElementOrderDirectivePrefix) || !Object.hasOwn(patch, key)) continue;
    const setOrder = patch[key];
    delete patch[key];
    if (!Array.isArray(setOrder)) throw errBadArgType("[]interface {}", setOrder);
    const originalKey = extractKey(key, setElementOrderDirectivePrefix);
    const foundOriginal = Object.hasOwn(original, originalKey);
    const foundPatch = Object.hasOwn(patch, originalKey);
    const originalList = original[originalKey];
    const patchList = patch[originalKey];
    if (foundOriginal && !Array.isArray(originalList)) throw errBadArgType("[]interface {}", originalList);
    if (foundPatch && !Array.isArray(patchList)) throw errBadArgType("[]interface {}", patchList);
    const originalFieldValue = (foundOriginal ? originalList : []) as unknown[];
    const patchFieldValue = (foundPatch ? patchList : []) as unknown[];

    const meta = lookupField(t, originalKey);
    const { strategy } = splitStrategy(meta.patchStrategy);
    const mergeKey = meta.patchMergeKey ?? "";
    validatePatchWithSetOrderList(patchFieldValue, setOrder, mergeKey);

    let merged: unknown[];
    if (foundOriginal && !foundPatch) merged = originalFieldValue;
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchFieldValue)[0] as unknown[];
    else if (foundOriginal && foundPatch) {
      // The live list is read again below for its order: merge a copy so deletions do not shift it.
      merged = mergeSliceHandler(
        [...originalFieldValue],
        patchFieldValue,
        meta.type,
        strategy,
        mergeKey,
        false,
        opts,
      );
    } else continue;

    const [patchItems, serverOnlyItems] =
      mergeKey === ""
        ? partitionPrimitivesByPresentInList(merged, setOrder)
        : partitionMapsByPresentInList(merged, setOrder, mergeKey);
    const kind = sliceElementType(originalFieldValue, patchFieldValue);
    setOwn(
      original,
      originalKey,
      normalizeElementOrder(patchItems, serverOnlyItems, setOrder, originalFieldValue, mergeKey, kind),
    );
    delete patch[originalKey];
  }
}

/** Every non-deleted item of the patch list must appear in the $setElementOrder list, in its order. */
function validatePatchWithSetOrderList(
  patchList: unknown[],
  setOrderList: unknown[],
  mergeKey: string,
): void {
  if (setOrderList.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey ? extractToDeleteItems(patchList)[0] : patchList;
  let patchIndex = 0;
  let setOrderIndex = 0;
  while (patchIndex < nonDelete.length && setOrderIndex < setOrderList.length) {
    if (isMap(nonDelete[patchIndex]) && Object.hasOwn(nonDelete[patchIndex] as JSONMap, directiveMarker)) {
      patchIndex++;
      continue;
    }
    if (mergeKeyValueEqual(nonDelete[patchIndex], setOrderList[setOrderIndex], mergeKey)) patchIndex++;
    setOrderIndex++;
  }
  if (patchIndex < nonDelete.length && setOrderIndex >= setOrderList.length) {
    throw new MergePatchError(
      `The order in patch list:\n${goFormat(patchList)}\n doesn't match ${setElementOrderDirectivePrefix} list:\n${goFormat(setOrderList)}\n`,
    );
  }
}
// #endregion set-element-order

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey === "") return left === right;
  if (!isMap(left)) throw errBadArgType("map[string]interface {}", left);
  if (!isMap(right)) throw errBadArgType("map[string]interface {}", right);
  if (!Object.hasOwn(left, mergeKey)) throw errNoMergeKey(left, mergeKey);
  if (!Object.hasOwn(right, mergeKey)) throw errNoMergeKey(right, mergeKey);
  return left[mergeKey] === right[mergeKey];
}

// #region merge-slice
/** mergeSliceHandler: merge by strategy, or the patch's list replaces the live one. */
function mergeSliceHandler(
  original: unknown[],
  patch: unknown[],
  elemType: StructMeta | undefined,
  strategy: string,
  mergeKey: string,
  isDeleteList: boolean,
  opts: MergeOptions,
): unknown[] {
  if (strategy !== mergeDirective) return patch;
  return mergeSlice(original, patch, elemType, mergeKey, opts, isDeleteList);
}

/**
 * mergeSlice: scalars are unioned (or, for a `$deleteFromPrimitiveList`, removed); objects are
 * matched by merge key after the `$patch` items had their say; then the order is normalized.
 */
function mergeSlice(
  original: unknown[],
  patch: unknown[],
  elemType: StructMeta | undefined,
  mergeKey: string,
  opts: MergeOptions,
  isDeleteList: boolean,
): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementType(original, patch);
  let merged: unknown[];
  if (kind !== "map") {
    if (opts.mergeParallelList && isDeleteList) return deleteFromSlice(original, patch);
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (mergeKey === "") throw new MergePatchError("cannot merge lists without merge key for type struct");
    [original, patch] = mergeSliceWithSpecialElements(original, patch, mergeKey);
    merged = mergeSliceWithoutSpecialElements([...original], patch, mergeKey, elemType, opts);
  }
  const [patchItems, serverOnlyItems] =
    mergeKey === ""
      ? partitionPrimitivesByPresentInList(merged, patch)
      : partitionMapsByPresentInList(merged, patch, mergeKey);
  return normalizeElementOrder(patchItems, serverOnlyItems, patch, original, mergeKey, kind);
}

/** `$patch: delete` items remove every live item with their key; `$patch: replace` drops the live list. */
function mergeSliceWithSpecialElements(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
): [unknown[], unknown[]] {
  const plain: unknown[] = [];
  let replace = false;
  for (const v of patch) {
    const item = v as JSONMap;
    if (!Object.hasOwn(item, directiveMarker)) {
      plain.push(v);
      continue;
    }
    const directive = item[directiveMarker];
    if (directive === deleteDirective) {
      if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
      original = deleteMatchingEntries(original, mergeKey, item[mergeKey]);
    } else if (directive === replaceDirective) {
      replace = true; // keep looking: other $patch items must still be dropped from the patch
    } else if (directive === mergeDirective) {
      throw new MergePatchError("merging lists cannot yet be specified in the patch");
    } else {
      throw errBadPatchType(directive, item);
    }
  }
  return replace ? [plain, []] : [original, plain];
}

function deleteMatchingEntries(original: unknown[], mergeKey: string, value: unknown): unknown[] {
  return original.filter((item, i) => {
    if (!isMap(item)) throw new MergePatchError(`value for key ${i} is not a map.`);
    return !(Object.hasOwn(item, mergeKey) && item[mergeKey] === value);
  });
}

// #region merge-by-key
/** Each patch item merges into the live item with the same key, or is appended. */
function mergeSliceWithoutSpecialElements(
  original: unknown[],
  patch: unknown[],
  mergeKey: string,
  elemType: StructMeta | undefined,
  opts: MergeOptions,
): unknown[] {
  for (const v of patch) {
    const item = v as JSONMap;
    if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    const found = findMapInSliceBasedOnKeyValue(original, mergeKey, item[mergeKey]);
    if (found) original[found.index] = mergeMap(found.map, item, elemType, opts);
    else original.push(v);
  }
  return original;
}
// #endregion merge-by-key

function findMapInSliceBasedOnKeyValue(
  list: unknown[],
  key: string,
  value: unknown,
): { map: JSONMap; index: number } | undefined {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (!isMap(item)) throw new MergePatchError(`value for key ${i} is not a map.`);
    if (Object.hasOwn(item, key) && item[key] === value) return { map: item, index: i };
  }
  return undefined;
}

/** Remove the values listed in a `$deleteFromPrimitiveList`. */
function deleteFromSlice(current: unknown[], toDelete: unknown[]): unknown[] {
  const gone = new Set(toDelete);
  return current.filter((v) => !gone.has(v));
}

/**
 * deduplicateScalars, as upstream writes it: a duplicate's slot is filled by the last element,
 * which reorders the list (the order is normalized afterwards anyway).
 */
function deduplicateScalars(s: unknown[]): unknown[] {
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length];
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

/** The Go kind shared by every element of the lists: lists of lists are refused, mixed types too. */
function sliceElementType(...slices: unknown[][]): string {
  let prev: string | undefined;
  for (const s of slices) {
    for (const v of s) {
      const cur = goType(v);
      if (prev === undefined) {
        prev = cur;
        if (cur === "slice") throw new MergePatchError(errNoListOfLists);
      } else if (prev !== cur) {
        throw new MergePatchError(`list element types are not identical: ${goFormat(slices)}`);
      }
    }
  }
  if (prev === undefined) throw new MergePatchError("no elements in any of the given slices");
  return prev;
}
// #endregion merge-slice

// #region element-order
function partitionPrimitivesByPresentInList(list: unknown[], partitionBy: unknown[]): [unknown[], unknown[]] {
  const inPatch = new Set(partitionBy);
  return [list.filter((v) => inPatch.has(v)), list.filter((v) => !inPatch.has(v))];
}

function partitionMapsByPresentInList(
  list: unknown[],
  partitionBy: unknown[],
  mergeKey: string,
): [unknown[], unknown[]] {
  const patch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of list) {
    if (!isMap(v)) throw errBadArgType("map[string]interface {}", v);
    if (!Object.hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    if (findMapInSliceBasedOnKeyValue(partitionBy, mergeKey, v[mergeKey])) patch.push(v);
    else serverOnly.push(v);
  }
  return [patch, serverOnly];
}

/**
 * normalizeElementOrder: sort the patch's items by the patch (or $setElementOrder) order, the
 * live-only items by live order, then interleave them keeping both relative orders.
 */
function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: string,
): unknown[] {
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(s, p, serverOrder, mergeKey, kind);
}

/**
 * mergeSortedSlice: walk both lists; a live-only item goes first only if the live order puts it
 * before the next patch item. Patch items win ties: they are where the user said.
 */
function mergeSortedSlice(
  left: unknown[],
  right: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: string,
): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexOf(serverOrder, left[i], mergeKey, kind);
      const ri = indexOf(serverOrder, right[j], mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

/** index(): position by merge key value for maps, by value for scalars (-1 if absent). */
function indexOf(list: unknown[], val: unknown, mergeKey: string, kind: string): number {
  const key = (item: unknown): unknown =>
    kind === "map" ? (isMap(item) ? (item[mergeKey] ?? null) : null) : item;
  const want = key(val);
  return list.findIndex((v) => key(v) === want);
}

/** normalizeSliceOrder: sort by `order`; `$patch: delete` items go last. */
function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: string): unknown[] {
  let items = toSort;
  let toDelete: unknown[] = [];
  if (kind === "map") {
    validateMergeKeyInLists(mergeKey, toSort, order);
    [items, toDelete] = extractToDeleteItems(toSort);
  }
  const less = (a: unknown, b: unknown): boolean => {
    const ia = indexOf(order, a, mergeKey, kind);
    if (ia >= 0) {
      const ib = indexOf(order, b, mergeKey, kind);
      if (ib >= 0) return ia < ib;
    }
    return true;
  };
  return [...sliceStable(items, less), ...toDelete];
}

/**
 * Go's sort.SliceStable for n ≤ 20 is one insertion sort; we run that, so a comparator that is
 * not a strict order gives upstream's result. Longer lists use a stable sort by the same test.
 */
function sliceStable(items: unknown[], less: (a: unknown, b: unknown) => boolean): unknown[] {
  const s = [...items];
  if (s.length > 20) return s.sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0));
  for (let i = 1; i < s.length; i++) {
    for (let j = i; j > 0 && less(s[j], s[j - 1]); j--) [s[j], s[j - 1]] = [s[j - 1], s[j]];
  }
  return s;
}

function validateMergeKeyInLists(mergeKey: string, ...lists: unknown[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isMap(item)) throw errBadArgType("map[string]interface {}", item);
      if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    }
  }
}

function extractToDeleteItems(list: unknown[]): [unknown[], unknown[]] {
  const keep: unknown[] = [];
  const del: unknown[] = [];
  for (const v of list) {
    if (!isMap(v)) throw errBadArgType("map[string]interface {}", v);
    if (v[directiveMarker] === deleteDirective) del.push(v);
    else keep.push(v);
  }
  return [keep, del];
}
// #endregion element-order

// #region as-decoded
/**
 * What decoding the result into the Go type does to leftovers the library keeps (directives in
 * appended list items, nulls inside them): no Go field is named `$…`, and a null field decodes to
 * its zero value, which the omitempty fields of the API types do not print. Lists keep their items.
 */
export function pruneAsDecoded<T>(v: T): T {
  if (Array.isArray(v)) {
    for (const item of v) pruneAsDecoded(item);
  } else if (isMap(v)) {
    for (const k of Object.keys(v)) {
      if (k.startsWith("$") || v[k] === null) delete v[k];
      else pruneAsDecoded(v[k]);
    }
  }
  return v;
}
// #endregion as-decoded
