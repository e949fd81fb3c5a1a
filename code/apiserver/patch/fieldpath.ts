/**
 * Field paths and field sets — how server-side apply names the fields a manager owns, and how a
 * set of them is stored in `metadata.managedFields` as FieldsV1. Upstream: the fieldpath package
 * of sigs.k8s.io/structured-merge-diff (PathElement, Path, Set), and FieldsToSet / SetToFields in
 * apimachinery's util/managedfields.
 *
 * Solves:
 * - ownership is per field, and a field inside a list has no index a second writer would agree
 *   on: a container is named by its merge key (`.spec.containers[name="app"]`), a finalizer by its
 *   value (`.metadata.finalizers[="x"]`), so two managers mean the same item whatever its position;
 * - the sets must survive being stored and read back, in upstream's FieldsV1 form (`f:spec` →
 *   `f:containers` → `k:{"name":"app"}` → `.` and `f:image`; `v:"x"` for set members), because
 *   kubectl and controllers read them.
 *
 * Invariants:
 * - a path's string form is unique to it (keys sorted), and a FieldSet holds each path once;
 * - `fieldsToSet(setToFields(s))` holds the same paths as `s`;
 * - FieldsV1 keys are sorted as Go marshals maps; a path that is owned and has owned children gets
 *   a `.` entry.
 *
 * @upstream kubernetes-sigs/structured-merge-diff fieldpath/element.go (PathElement)
 * @upstream kubernetes-sigs/structured-merge-diff fieldpath/path.go (Path.String)
 * @upstream kubernetes-sigs/structured-merge-diff fieldpath/set.go (Set: Insert, Has, Difference)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/fields.go (FieldsToSet, SetToFields)
 * @chapter 02-apiserver
 */

// #region field-path
/** One step of a path: a struct/map field, a list item by its key, a set member, a list index. */
export type PathElement =
  | { field: string }
  | { key: Record<string, unknown> }
  | { value: unknown }
  | { index: number };
export type FieldPath = PathElement[];

/** fieldpath.Path.String(): `.spec.containers[name="app"].image`, `.metadata.finalizers[="x"]`. */
export function pathString(path: FieldPath): string {
  let s = "";
  for (const e of path) s += elementString(e);
  return s;
}

/** One element's part of pathString, so a walk can extend its parent's string instead of rebuilding it. */
export function elementString(e: PathElement): string {
  if ("field" in e) return `.${e.field}`;
  if ("index" in e) return `[${e.index}]`;
  if ("value" in e) return `[=${JSON.stringify(e.value)}]`;
  const keys = Object.keys(e.key).sort();
  return `[${keys.map((k) => `${k}=${JSON.stringify(e.key[k])}`).join(",")}]`;
}

/** fieldpath.Set: a set of paths, keyed by their string form. */
export class FieldSet {
  private readonly paths = new Map<string, FieldPath>();
  add(p: FieldPath): void {
    this.paths.set(pathString(p), p);
  }
  /** add, when the caller already has the path's string (`key` must be pathString(p)). */
  addKeyed(key: string, p: FieldPath): void {
    this.paths.set(key, p);
  }
  get(key: string): FieldPath | undefined {
    return this.paths.get(key);
  }
  hasKey(key: string): boolean {
    return this.paths.has(key);
  }
  deleteKey(key: string): void {
    this.paths.delete(key);
  }
  /** The paths with their strings, in insertion order. */
  entries(): IterableIterator<[string, FieldPath]> {
    return this.paths.entries();
  }
  has(p: FieldPath): boolean {
    return this.paths.has(pathString(p));
  }
  delete(p: FieldPath): void {
    this.paths.delete(pathString(p));
  }
  get size(): number {
    return this.paths.size;
  }
  list(): FieldPath[] {
    return [...this.paths.values()];
  }
  /** Whether the set holds `p` or a path below it. */
  hasPrefix(p: FieldPath): boolean {
    const s = pathString(p);
    for (const k of this.paths.keys())
      if (k === s || k.startsWith(`${s}.`) || k.startsWith(`${s}[`)) return true;
    return false;
  }
}
// #endregion field-path

// #region fields-v1
/** SetToFields: the FieldsV1 tree; a path that is owned and has owned children gets a `.` entry. */
export function setToFields(set: FieldSet): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const path of set.list()) {
    let node = root;
    for (const e of path) {
      const k = elementKey(e);
      node[k] ??= {};
      node = node[k] as Record<string, unknown>;
    }
    node["."] = {};
  }
  // A leaf carries only its `.` marker: upstream writes it as {}. Keys sorted, as Go marshals maps.
  const strip = (n: Record<string, unknown>): Record<string, unknown> => {
    const keys = Object.keys(n).sort();
    if (keys.length === 1 && keys[0] === ".") return {};
    return Object.fromEntries(keys.map((k) => [k, k === "." ? {} : strip(n[k] as Record<string, unknown>)]));
  };
  return strip(root);
}

// #region fields-v1-cache
/**
 * setToFields, remembered: writes of one shape (each pod a benchmark or a ReplicaSet posts) own
 * the same paths, so they get the same FieldsV1 tree. It is built once per distinct set, frozen
 * (a stray write throws instead of changing every object that shares it) and shared. The key is
 * the set's path strings in order, each prefixed by its length so no two sets can share one.
 * Upstream builds the tree per write (compiled Go); this is ours, for a single-threaded server.
 */
const fieldsV1Cache = new Map<string, Record<string, unknown>>();
const fieldsV1CacheSize = 256;

export function setToFieldsCached(set: FieldSet): Record<string, unknown> {
  let key = "";
  for (const [k] of set.entries()) key += `${k.length}:${k}`;
  let tree = fieldsV1Cache.get(key);
  if (tree === undefined) {
    tree = freezeTree(setToFields(set));
    // Oldest out first: the shapes in use come back at once.
    if (fieldsV1Cache.size >= fieldsV1CacheSize)
      fieldsV1Cache.delete(fieldsV1Cache.keys().next().value as string);
    fieldsV1Cache.set(key, tree);
  }
  return tree;
}

function freezeTree(node: Record<string, unknown>): Record<string, unknown> {
  for (const child of Object.values(node)) freezeTree(child as Record<string, unknown>);
  return Object.freeze(node);
}
// #endregion fields-v1-cache

/** FieldsToSet: read a FieldsV1 tree back into paths. */
export function fieldsToSet(fields: unknown): FieldSet {
  const set = new FieldSet();
  const walk = (node: unknown, prefix: FieldPath) => {
    if (typeof node !== "object" || node === null) return;
    const entries = Object.entries(node as Record<string, unknown>);
    if (entries.length === 0 && prefix.length > 0) set.add(prefix);
    for (const [k, child] of entries) {
      if (k === ".") {
        set.add(prefix);
        continue;
      }
      const e = parseElementKey(k);
      if (e) walk(child, [...prefix, e]);
    }
  };
  walk(fields, []);
  return set;
}

function elementKey(e: PathElement): string {
  if ("field" in e) return `f:${e.field}`;
  if ("index" in e) return `i:${e.index}`;
  if ("value" in e) return `v:${JSON.stringify(e.value)}`;
  const sorted = Object.fromEntries(
    Object.keys(e.key)
      .sort()
      .map((k) => [k, e.key[k]]),
  );
  return `k:${JSON.stringify(sorted)}`;
}

function parseElementKey(k: string): PathElement | undefined {
  const body = k.slice(2);
  try {
    if (k.startsWith("f:")) return { field: body };
    if (k.startsWith("i:")) return { index: Number(body) };
    if (k.startsWith("v:")) return { value: JSON.parse(body) };
    if (k.startsWith("k:")) return { key: JSON.parse(body) };
  } catch {
    return undefined;
  }
  return undefined;
}
// #endregion fields-v1
