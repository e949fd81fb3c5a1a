/**
 * Strategy helpers — the small pieces every resource's strategy shares.
 * The metadata fields a field selector can always use (upstream: k8s.io/apiserver
 * pkg/registry/generic/matcher.go), upstream's "semantic" equality (k8s.io/apimachinery
 * pkg/api/equality/semantic.go), and the base strategy each resource starts from.
 *
 * Solves:
 * - "did the spec change?" must ignore the difference between a field that is absent and one
 *   that holds its zero value: upstream compares Go structs, where an absent `[]` and an empty
 *   one are the same value. Comparing JSON text instead would bump `metadata.generation` when a
 *   client merely re-sends `selector: {}` for a missing selector;
 * - every resource answers the same questions (create on PUT? update without resourceVersion?),
 *   so a resource file only states where it differs from the generic answers.
 *
 * Invariants:
 * - `semanticDeepEqual(a, b)` is symmetric, and treats undefined, null, "", 0, false, [] and {}
 *   (an object whose every field is such a zero) as one value;
 * - `baseStrategy` changes nothing on create or update and validates with the kind's rules.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/matcher.go (ObjectMetaFieldsSet, AddObjectMetaFieldsSet, MergeFieldsSets)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/equality/semantic.go (Semantic.DeepEqual)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/third_party/forked/golang/reflect/deep_equal.go (Equalities.DeepEqual: empty and nil slices and maps are equal)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { validateCreate, validateUpdate } from "./validation.ts";

// #region object-meta-fields
/**
 * The fields every object offers a field selector: its name, and its namespace when the
 * resource is namespaced (upstream's ObjectMetaFieldsSet with hasNamespaceField).
 */
export function objectMetaFieldsSet(obj: KubeObject, namespaced: boolean): Record<string, string> {
  const fields: Record<string, string> = { "metadata.name": obj.metadata?.name ?? "" };
  if (namespaced) fields["metadata.namespace"] = obj.metadata?.namespace ?? "";
  return fields;
}
// #endregion object-meta-fields

// #region semantic-equality
/** Go's zero value, as JSON shows it: absent, null, "", 0, false, [] or an all-zero object. */
export function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === "" || v === 0 || v === false) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.values(v as Record<string, unknown>).every(isZero);
  return false;
}

/**
 * Upstream's `apiequality.Semantic.DeepEqual` over JSON: structural equality in which a missing
 * field equals its zero value. (Upstream also compares quantities by value — `1000m` equals `1`;
 * we compare them as written, which only matters to a client that rewrites its own quantities.)
 */
export function semanticDeepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isZero(a) && isZero(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticDeepEqual(x, b[i]));
  }
  if (typeof a === "object" && typeof b === "object" && a !== null && b !== null) {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    const keys = new Set([...Object.keys(ra), ...Object.keys(rb)]);
    for (const k of keys) if (!semanticDeepEqual(ra[k], rb[k])) return false;
    return true;
  }
  return false;
}
// #endregion semantic-equality

/** Sets `obj[field]` to a copy of `old[field]`, or removes it when `old` has none. */
export function keepFromOld(obj: Record<string, unknown>, old: Record<string, unknown>, field: string): void {
  if (old[field] === undefined) delete obj[field];
  else obj[field] = structuredClone(old[field]);
}

// #region base-strategy
/**
 * The generic answers, which each resource overrides where upstream's strategy does:
 * nothing to prepare, the kind's validation, no create on PUT, updates without a
 * resourceVersion allowed (upstream's AllowUnconditionalUpdate is true for nearly every core
 * resource — the last writer wins unless the client sends a resourceVersion).
 */
export function baseStrategy(namespaced: boolean): RESTStrategy {
  return {
    namespaceScoped: namespaced,
    prepareForCreate() {},
    prepareForUpdate() {},
    validate: (obj) => validateCreate(obj),
    validateUpdate: (obj, old) => validateUpdate(obj, old),
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    selectableFields: (obj) => objectMetaFieldsSet(obj, namespaced),
    // DefaultMetaV1FieldSelectorConversion: name and namespace, even for cluster-scoped kinds.
    fieldLabels: ["metadata.name", "metadata.namespace"],
  };
}

/**
 * The status subresource of `main`: upstream's `xxxStatusStrategy` embeds the main strategy,
 * so everything not overridden here (scope, create-on-update, unconditional update, fields)
 * is the main one's.
 */
export function statusStrategy(
  main: RESTStrategy,
  overrides: Pick<RESTStrategy, "prepareForUpdate"> & Partial<RESTStrategy>,
): RESTStrategy {
  const status: RESTStrategy = { ...main, ...overrides };
  delete status.status;
  return status;
}
// #endregion base-strategy
