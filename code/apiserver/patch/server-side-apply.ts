/**
 * Server-side apply — merge a manager's desired fields and record who owns which field.
 * Upstream: apimachinery's util/managedfields/internal/structuredmerge.go, which runs
 * sigs.k8s.io/structured-merge-diff over the OpenAPI schema; ours is a smaller model of it.
 *
 * `Content-Type: application/apply-patch+yaml`: the client sends the fields it wants to own (its
 * "applied configuration"); the API server merges them into the live object and records, per
 * field manager, which fields each manager owns in `metadata.managedFields`.
 *
 * Solves:
 * - two writers (a user's `kubectl apply --server-side`, an autoscaler) changing one object must
 *   not silently undo each other: changing a field another manager owns to a different value is a
 *   409 Conflict naming the manager and the field, unless the applier says `force=true` and takes
 *   it over;
 * - "delete what I no longer apply": a field this manager applied last time and omits now is
 *   removed — unless another manager still owns it;
 * - apply creates the object when it does not exist (PATCH as upsert).
 *
 * Invariants:
 * - a managed field set is a set of paths (fieldpath.ts): `.spec.replicas`,
 *   `.spec.containers[name="app"]` (the item itself), `.metadata.finalizers[="x"]` (a set member);
 * - after an apply, the applier's Apply entry holds exactly the paths of its configuration, and
 *   a path forced away from another manager is no longer in that manager's set;
 * - empty entries are dropped; `apiVersion`, `kind`, name, namespace and other system metadata,
 *   and `status` (reset for the main resource), are never owned.
 *
 * What sigs.k8s.io/structured-merge-diff does that we do not:
 * - it knows every type from the OpenAPI schema (list types `atomic`/`set`/`map`, multi-key list
 *   maps such as container ports keyed by `containerPort` and `protocol`, key defaults, atomic
 *   structs and maps); we derive list types from patch-meta.ts (merge with key → map keyed by that
 *   one key; merge without key → set; untagged → atomic) plus a few known atomic selectors;
 * - it converts managed field sets between API versions, merges object `status` through the
 *   status subresource with its own managers, assigns pre-existing fields to `before-first-apply`,
 *   caps the number of Update entries, and orders managedFields; we do none of these;
 * - it also reports a conflict when the apply adds a field another manager owns but which is not
 *   in the live object; we treat such stale ownership as no conflict;
 * - its merged associative lists follow the applied order; ours keep live order, appending new items;
 * - an Update entry also owns a map it added as a whole (`.` under `f:labels`); ours owns leaves only.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/structuredmerge.go (structuredMergeManager.Apply, Update)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/conflict.go (NewConflictError, getConflictMessage, printManager)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (applyPatcher)
 * @upstream kubernetes-sigs/structured-merge-diff merge/update.go (Updater.Apply, Updater.Update)
 * @upstream kubernetes-sigs/structured-merge-diff typed/tofieldset.go (TypedValue.ToFieldSet)
 * @chapter 02-apiserver
 */

import { parse as parseYAML } from "yaml";
import type { KubeObject, ManagedFieldsEntry } from "../../api/meta.ts";
import { newApplyConflict, newBadRequest, type StatusError } from "../errors.ts";
import {
  elementString,
  type FieldPath,
  FieldSet,
  fieldsToSet,
  pathString,
  setToFields,
  setToFieldsCached,
} from "./fieldpath.ts";
import { getOwn, isJSONObject as isMap, jsonEqual, jsonTypeName, setOwn } from "./json-value.ts";
import { type FieldMeta, lookupField, lookupKind, type StructMeta } from "./patch-meta.ts";

// #region schema
type ListType = "atomic" | "set" | "map";

/** Selectors declared atomic in the OpenAPI schema: owned as a whole, not key by key. */
const atomicFields: Record<string, readonly string[]> = {
  DeploymentSpec: ["selector"],
  ReplicaSetSpec: ["selector"],
  ServiceSpec: ["selector"],
};

function isAtomicMap(t: StructMeta | undefined, field: string): boolean {
  return !!t && (atomicFields[t.name] ?? []).includes(field);
}

function listType(meta: FieldMeta): ListType {
  if (!meta.patchStrategy?.split(",").includes("merge")) return "atomic";
  return meta.patchMergeKey ? "map" : "set";
}
// #endregion schema

/** Never owned by anyone: the type, the status (reset for the main resource), what the server sets. */
const ignoredTopLevel = new Set(["apiVersion", "kind", "status"]);
const ignoredMetadata = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
  "managedFields",
]);

// #region to-field-set
/**
 * toFieldSet: the paths an object sets. Leaves are scalars, atomic lists and maps, and empty
 * maps; items of list maps and members of sets are owned as items, and an item's fields below it.
 */
export function toFieldSet(obj: unknown, schema: StructMeta | undefined): FieldSet {
  const set = new FieldSet();
  // Each step carries its path's string along (`key`), so a path's string is built once, by
  // extending its parent's, not rebuilt from the root at every level.
  const walkMap = (m: Record<string, unknown>, t: StructMeta | undefined, prefix: FieldPath, key: string) => {
    const top = prefix.length === 0;
    const inMetadata = key === ".metadata";
    for (const k of Object.keys(m)) {
      if (top && ignoredTopLevel.has(k)) continue;
      if (inMetadata && ignoredMetadata.has(k)) continue;
      const e = { field: k };
      walkValue(m[k], lookupField(t, k), isAtomicMap(t, k), [...prefix, e], key + elementString(e));
    }
  };
  const walkValue = (v: unknown, meta: FieldMeta, atomic: boolean, path: FieldPath, key: string) => {
    if (isMap(v) && !atomic && hasAnyKey(v)) {
      walkMap(v, meta.type, path, key);
      return;
    }
    if (Array.isArray(v) && listType(meta) === "map") {
      for (const item of v) {
        if (!isMap(item) || !(meta.patchMergeKey! in item)) continue;
        const e = { key: { [meta.patchMergeKey!]: item[meta.patchMergeKey!] } };
        const itemPath: FieldPath = [...path, e];
        const itemKey = key + elementString(e);
        set.addKeyed(itemKey, itemPath);
        walkMap(item, meta.type, itemPath, itemKey);
      }
      return;
    }
    if (Array.isArray(v) && listType(meta) === "set") {
      for (const item of v) {
        const e = { value: item };
        set.addKeyed(key + elementString(e), [...path, e]);
      }
      return;
    }
    set.addKeyed(key, path);
  };
  if (isMap(obj)) walkMap(obj, schema, [], "");
  return set;
}

function hasAnyKey(m: object): boolean {
  for (const _ in m) return true;
  return false;
}
// #endregion to-field-set

/** The value a path points at, or undefined. */
function valueAt(obj: unknown, path: FieldPath): unknown {
  let cur = obj;
  for (const e of path) {
    if ("field" in e) cur = isMap(cur) ? getOwn(cur, e.field) : undefined;
    else if ("index" in e) cur = Array.isArray(cur) ? cur[e.index] : undefined;
    else if ("value" in e)
      cur = Array.isArray(cur) && cur.some((x) => jsonEqual(x, e.value)) ? e.value : undefined;
    else cur = Array.isArray(cur) ? cur.find((x) => matchesKey(x, e.key)) : undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function matchesKey(item: unknown, key: Record<string, unknown>): boolean {
  return isMap(item) && Object.entries(key).every(([k, v]) => jsonEqual(getOwn(item, k), v));
}

/** Remove what a path points at: a map key, a list item, a set member. */
function removeAt(obj: unknown, path: FieldPath): void {
  const parent = valueAt(obj, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if ("field" in last) {
    if (isMap(parent)) delete parent[last.field];
  } else if (Array.isArray(parent)) {
    const i =
      "index" in last
        ? last.index
        : "value" in last
          ? parent.findIndex((x) => jsonEqual(x, last.value))
          : parent.findIndex((x) => matchesKey(x, last.key));
    if (i >= 0 && i < parent.length) parent.splice(i, 1);
  }
}

// #region merge
/** Structured merge: maps key by key, list maps item by key, sets by value; the rest is replaced. */
function mergeValue(live: unknown, applied: unknown, meta: FieldMeta, atomic: boolean): unknown {
  if (isMap(live) && isMap(applied) && !atomic) {
    const out: Record<string, unknown> = { ...live };
    for (const [k, v] of Object.entries(applied)) {
      setOwn(out, k, mergeValue(getOwn(live, k), v, lookupField(meta.type, k), isAtomicMap(meta.type, k)));
    }
    return out;
  }
  if (Array.isArray(live) && Array.isArray(applied)) {
    const kind = listType(meta);
    if (kind === "map") {
      const key = meta.patchMergeKey!;
      const out = [...live];
      for (const item of applied) {
        const i = out.findIndex((x) => isMap(x) && isMap(item) && jsonEqual(x[key], item[key]));
        if (i >= 0) out[i] = mergeValue(out[i], item, { type: meta.type }, false);
        else out.push(item);
      }
      return out;
    }
    if (kind === "set") return [...live, ...applied.filter((v) => !live.some((x) => jsonEqual(x, v)))];
  }
  return structuredClone(applied);
}
// #endregion merge

/** A manager's identity, as upstream encodes it: Update entries are per API version too. */
function managerKey(e: ManagedFieldsEntry): string {
  const id: Record<string, string> = { manager: e.manager ?? "", operation: e.operation ?? "" };
  if (e.operation === "Update") id.apiVersion = e.apiVersion ?? "";
  if (e.subresource) id.subresource = e.subresource;
  return JSON.stringify(id);
}

/** printManager: `"kubectl"` for Apply, `"kube-controller-manager" using apps/v1` for Update. */
function printManager(e: ManagedFieldsEntry): string {
  let s = JSON.stringify(e.manager ?? "");
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === "Update") s += ` using ${e.apiVersion ?? ""}`;
  return s;
}

// #region conflicts
interface Conflict {
  entry: ManagedFieldsEntry;
  path: FieldPath;
}

/** NewConflictError: 409 Conflict, one cause per field, upstream's message format. */
export function newConflictError(conflicts: readonly Conflict[]): StatusError {
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.entry)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, Conflict[]>();
    for (const c of conflicts) {
      const k = managerKey(c.entry);
      byManager.set(k, [...(byManager.get(k) ?? []), c]);
    }
    const lines: string[] = [];
    for (const k of [...byManager.keys()].sort()) {
      const group = byManager.get(k)!;
      lines.push(`conflicts with ${printManager(group[0]!.entry)}:`);
      for (const c of group) lines.push(`- ${pathString(c.path)}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join("\n")}`;
  }
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${printManager(c.entry)}`,
    field: pathString(c.path),
  }));
  return newApplyConflict(causes, message);
}
// #endregion conflicts

export interface ApplyOptions {
  /** The `fieldManager` query parameter (validated by validatePatchOptions). */
  fieldManager: string;
  /** `force=true`: take conflicting fields from their managers instead of failing. */
  force?: boolean;
  /** The apiVersion and kind the request's URL names (the applied configuration must match). */
  apiVersion: string;
  kind: string;
  /** RFC 3339 time written into the manager's entry. */
  now?: string;
}

/**
 * The body of an apply request: YAML (JSON is YAML too) holding one object. An empty body is an
 * empty object (the version check then refuses it); a list or scalar fails as sigs.k8s.io/yaml
 * fails to unmarshal it into a map.
 */
export function decodeApplyPatch(body: string): Record<string, unknown> {
  let obj: unknown;
  try {
    obj = parseYAML(body, { uniqueKeys: false }); // duplicates: field validation decides (decoding/patched-object.ts)
  } catch (e) {
    throw newBadRequest(`error decoding YAML: ${(e as Error).message}`);
  }
  if (obj === null || obj === undefined) return {};
  if (!isMap(obj)) {
    throw newBadRequest(
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${jsonTypeName(obj)} into Go value of type map[string]interface {}`,
    );
  }
  return obj;
}

// #region apply
/**
 * Apply `applied` for `opts.fieldManager` to `live` (undefined: the object does not exist yet and
 * is created from the configuration). Returns the new object with updated managedFields, or
 * throws a StatusError (400 for a bad configuration, 409 for conflicts).
 */
export function applyServerSideApply(
  live: KubeObject | undefined,
  applied: unknown,
  opts: ApplyOptions,
): KubeObject {
  if (!isMap(applied)) throw newBadRequest("error decoding YAML: the applied configuration is not an object");
  if (applied.apiVersion !== opts.apiVersion) {
    throw newBadRequest(
      `Incorrect version specified in apply patch. Specified patch version: ${String(applied.apiVersion ?? "")}, expected: ${opts.apiVersion}`,
    );
  }
  const appliedMeta = isMap(applied.metadata) ? applied.metadata : {};
  if (appliedMeta.managedFields !== undefined && appliedMeta.managedFields !== null) {
    throw newBadRequest("metadata.managedFields must be nil");
  }
  const schema = lookupKind(opts.apiVersion, opts.kind);
  const config = structuredClone(applied);
  // Reset for the main resource, whose status is written through /status. An apply to /status
  // itself is not modelled (see the header): its status is dropped here too.
  delete config.status;

  const base: KubeObject = live
    ? structuredClone(live)
    : { apiVersion: opts.apiVersion, kind: opts.kind, metadata: {} };
  base.metadata ??= {};
  const entries: ManagedFieldsEntry[] = base.metadata.managedFields ?? [];
  const me: ManagedFieldsEntry = { manager: opts.fieldManager, operation: "Apply" };
  const myKey = managerKey(me);
  const sets = entries.map((e) => fieldsToSet(e.fieldsV1));
  const mine = entries.findIndex((e) => managerKey(e) === myKey);
  const previous = mine >= 0 ? sets[mine]! : new FieldSet();
  const appliedSet = toFieldSet(config, schema);

  // Conflicts: a leaf another manager owns whose value the configuration changes.
  const conflicts: Conflict[] = [];
  entries.forEach((entry, i) => {
    if (i === mine) return;
    for (const path of appliedSet.list()) {
      if (!sets[i]!.has(path) || !("field" in path[path.length - 1]!)) continue;
      const current = valueAt(base, path);
      if (current !== undefined && !jsonEqual(current, valueAt(config, path)))
        conflicts.push({ entry, path });
    }
  });
  if (conflicts.length > 0 && !opts.force) throw newConflictError(conflicts);
  for (const c of conflicts) sets[entries.indexOf(c.entry)]!.delete(c.path);

  const merged = mergeValue(base, config, { type: schema }, false) as KubeObject;

  // Fields this manager stops applying go, unless someone else still owns them (or below them).
  const dropped = previous.list().filter((p) => !appliedSet.has(p));
  dropped.sort((a, b) => a.length - b.length);
  for (const path of dropped) {
    const ownedElsewhere = sets.some((s, i) => i !== mine && s.hasPrefix(path));
    if (!ownedElsewhere) removeAt(merged, path);
  }

  const now = opts.now ?? new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  const myEntry: ManagedFieldsEntry = {
    manager: opts.fieldManager,
    operation: "Apply",
    apiVersion: opts.apiVersion,
    time: now,
    fieldsType: "FieldsV1",
    fieldsV1: setToFields(appliedSet),
  };
  const next: ManagedFieldsEntry[] = [];
  entries.forEach((e, i) => {
    if (i === mine) next.push(myEntry);
    else if (sets[i]!.size > 0) next.push({ ...e, fieldsV1: setToFields(sets[i]!) });
  });
  if (mine < 0) next.push(myEntry);
  merged.metadata = { ...(merged.metadata ?? {}), managedFields: next };
  return merged;
}
// #endregion apply

// #region update
/**
 * The bookkeeping of every other write (create, update, non-apply patch): the writer's Update
 * entry gains the fields it added or changed, other managers lose them, and fields that are gone
 * leave every set. Returns `updated` with its managedFields set.
 */
export function updateManagedFields(
  old: KubeObject | undefined,
  updated: KubeObject,
  manager: string,
  apiVersion: string,
  now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
): KubeObject {
  const schema = lookupKind(apiVersion, updated.kind ?? "");
  const oldSet = old ? toFieldSet(old, schema) : new FieldSet();
  const newSet = toFieldSet(updated, schema);
  // Paths by their strings: a create (no old object) changes every path it sets.
  const changed: string[] = [];
  for (const [k, p] of newSet.entries())
    if (!old || !oldSet.hasKey(k) || !jsonEqual(valueAt(old, p), valueAt(updated, p))) changed.push(k);
  const gone: string[] = [];
  for (const [k] of oldSet.entries()) if (!newSet.hasKey(k)) gone.push(k);

  const me: ManagedFieldsEntry = { manager, operation: "Update", apiVersion };
  const myKey = managerKey(me);
  const entries = (old?.metadata?.managedFields ?? []).map((e) => ({
    entry: e,
    set: fieldsToSet(e.fieldsV1),
  }));
  let mine = entries.find((x) => managerKey(x.entry) === myKey);
  if (!mine && changed.length > 0) {
    mine = { entry: me, set: new FieldSet() };
    entries.push(mine);
  }
  for (const x of entries) {
    for (const k of gone) x.set.deleteKey(k);
    for (const k of changed) {
      if (x === mine) x.set.addKeyed(k, newSet.get(k) as FieldPath);
      else x.set.deleteKey(k);
    }
  }
  // The caller hands over an object of its own (decoded or cloned for this write): only the
  // metadata, which gets the new managedFields, is copied, not the whole object.
  const out: KubeObject = { ...updated, metadata: { ...(updated.metadata ?? {}) } };
  out.metadata.managedFields = entries
    .filter((x) => x.set.size > 0)
    .map((x) =>
      x === mine
        ? { ...me, time: now, fieldsType: "FieldsV1" as const, fieldsV1: setToFieldsCached(x.set) }
        : { ...x.entry, fieldsV1: setToFieldsCached(x.set) },
    );
  return out;
}
// #endregion update
