/**
 * ObjectMeta validation — the checks every kind shares: a valid name, a namespace exactly when
 * the kind is namespaced, well-formed labels and annotations, owner references and finalizers,
 * and on update the fields that may never change.
 * Upstream: apimachinery's pkg/api/validation/objectmeta.go and
 * pkg/apis/meta/v1/validation/validation.go.
 *
 * Solves:
 * - a name ends up in URLs, DNS and label values, so each kind picks a name rule (DNS
 *   subdomain for most, DNS label for namespaces, DNS-1035 label for services) and this file
 *   applies it to `name` and, as a prefix, to `generateName`;
 * - identity must not drift: `name`, `namespace`, `uid` and `creationTimestamp` are fixed at
 *   creation, and `generation` only grows.
 *
 * Invariants:
 * - errors are reported under `metadata.*` with upstream's paths and messages; label and
 *   annotation errors are on `metadata.labels` / `metadata.annotations` (no key in the path),
 *   as upstream;
 * - namespace presence is checked here as upstream does, but in practice the REST handler has
 *   already set it from the URL (namespaced kinds) or cleared it (cluster-scoped kinds);
 * - `resourceVersion` must be present on update — the handler fills it in from storage for an
 *   unconditional update (a PUT without it), so this only fires if it did not.
 *
 * Not here: upstream's rest.BeforeCreate / BeforeUpdate add a second, generic pass with
 * ValidatePathSegmentName (string-validation.ts has it, but nothing calls it: every kind served
 * here has a stricter name rule that already refuses `/`, `%`, `.` and `..`) and validate
 * `managedFields`, which nothing here validates.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go (ValidateObjectMeta, ValidateObjectMetaUpdate, ValidateAnnotations, TotalAnnotationSizeLimitB, ValidateOwnerReferences, ValidateFinalizers, ValidateImmutableField, BannedOwners)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/validation/generic.go (ValidateNonnegativeField, IsNegativeErrorMsg)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (ValidateLabels, ValidateLabelName, ValidateLabelSelector, ValidateLabelSelectorRequirement)
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidateObjectMeta, ValidateObjectMetaUpdate, validateKubeFinalizerName)
 * @chapter 02-apiserver
 */

import {
  childPath,
  type FieldError,
  forbidden,
  GoValue,
  goStringSlice,
  indexPath,
  invalid,
  required,
  tooLong,
} from "./field-errors.ts";
import type { ObjectMeta, OwnerReference } from "./meta.ts";
import {
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSLabel,
  type ValidateNameFunc,
} from "./string-validation.ts";

export const FIELD_IMMUTABLE_ERROR_MSG = "field is immutable";
export const IS_NEGATIVE_ERROR_MSG = "must be greater than or equal to 0";
/** 256 KiB across all annotation keys and values: annotations live in etcd with the object. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * (1 << 10);

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

export function validateNonnegativeField(value: number, path: string): FieldError[] {
  return value < 0 ? [invalid(path, value, IS_NEGATIVE_ERROR_MSG)] : [];
}

// #region labels
export function validateLabelName(name: string, path: string): FieldError[] {
  return isQualifiedName(name).map((message) => invalid(path, name, message));
}

/** ValidateLabels: every key a qualified name, every value a label value — all errors on `path` itself. */
export function validateLabels(labels: unknown, path: string): FieldError[] {
  if (typeof labels !== "object" || labels === null) return [];
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(labels as Record<string, unknown>)) {
    errors.push(...validateLabelName(key, path));
    const text = typeof value === "string" ? value : String(value);
    errors.push(...isValidLabelValue(text).map((message) => invalid(path, text, message)));
  }
  return errors;
}

/** ValidateAnnotations: keys are qualified names (case-insensitively); the total stays under 256 KiB. */
export function validateAnnotations(annotations: unknown, path: string): FieldError[] {
  if (typeof annotations !== "object" || annotations === null) return [];
  const errors: FieldError[] = [];
  let totalSize = 0;
  for (const [key, value] of Object.entries(annotations as Record<string, unknown>)) {
    errors.push(...isQualifiedName(key.toLowerCase()).map((message) => invalid(path, key, message)));
    totalSize += byteLength(key) + byteLength(typeof value === "string" ? value : String(value));
  }
  if (totalSize > TOTAL_ANNOTATION_SIZE_LIMIT_B) errors.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errors;
}

/** ValidateLabelSelector (strict: label values in expressions must be valid label values). */
export function validateLabelSelector(selector: unknown, path: string): FieldError[] {
  if (typeof selector !== "object" || selector === null) return [];
  const s = selector as { matchLabels?: unknown; matchExpressions?: unknown };
  const errors = validateLabels(s.matchLabels, childPath(path, "matchLabels"));
  const expressions = Array.isArray(s.matchExpressions) ? s.matchExpressions : [];
  expressions.forEach((expression, i) => {
    const e = (expression ?? {}) as { key?: unknown; operator?: unknown; values?: unknown };
    const at = indexPath(childPath(path, "matchExpressions"), i);
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    const operatorErrors = setOperatorValuesErrors(e.operator, values, childPath(at, "values"));
    if (operatorErrors) errors.push(...operatorErrors);
    else errors.push(invalid(childPath(at, "operator"), e.operator ?? "", "not a valid selector operator"));
    errors.push(...validateLabelName(typeof e.key === "string" ? e.key : "", childPath(at, "key")));
    values.forEach((value, j) => {
      errors.push(
        ...isValidLabelValue(value).map((message) =>
          invalid(indexPath(childPath(at, "values"), j), value, message),
        ),
      );
    });
  });
  return errors;
}
// #endregion labels

// #region owner-references
/** apiVersion's version part as schema.ParseGroupVersion sees it ("" when unparseable). */
function versionOf(apiVersion: string): string {
  const parts = apiVersion.split("/");
  if (parts.length === 1) return parts[0];
  if (parts.length === 2) return parts[1];
  return "";
}

function validateOwnerReference(ref: OwnerReference, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const apiVersion = typeof ref.apiVersion === "string" ? ref.apiVersion : "";
  if (versionOf(apiVersion) === "") {
    errors.push(invalid(childPath(path, "apiVersion"), apiVersion, "version must not be empty"));
  }
  if (!ref.kind) errors.push(invalid(childPath(path, "kind"), ref.kind ?? "", "kind must not be empty"));
  if (!ref.name) errors.push(invalid(childPath(path, "name"), ref.name ?? "", "name must not be empty"));
  if (!ref.uid) errors.push(invalid(childPath(path, "uid"), ref.uid ?? "", "uid must not be empty"));
  // An Event is garbage; nothing may depend on it (BannedOwners).
  if (apiVersion === "v1" && ref.kind === "Event") {
    errors.push(invalid(path, ref, "/v1, Kind=Event is disallowed from being an owner"));
  }
  return errors;
}

/** ValidateOwnerReferences: each reference complete, and at most one marked `controller: true`. */
export function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  if (!Array.isArray(refs)) return [];
  const errors: FieldError[] = [];
  let firstController = "";
  for (const ref of refs as OwnerReference[]) {
    errors.push(...validateOwnerReference(ref ?? ({} as OwnerReference), path));
    if (ref?.controller === true) {
      const current = `${ref.kind}/${ref.name}`;
      if (firstController !== "") {
        errors.push(
          invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return errors;
}
// #endregion owner-references

// #region finalizers
/** The finalizers core knows without a domain prefix (helper.IsStandardFinalizerName). */
const STANDARD_FINALIZERS = new Set(["kubernetes", "orphan", "foregroundDeletion"]);

export function validateFinalizerName(name: string, path: string): FieldError[] {
  return isQualifiedName(name).map((message) => invalid(path, name, message));
}

/** validateKubeFinalizerName: an unprefixed finalizer must be one of the standard ones. */
export function validateKubeFinalizerName(name: string, path: string): FieldError[] {
  if (name.split("/").length === 1 && !STANDARD_FINALIZERS.has(name)) {
    return [invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified")];
  }
  return [];
}

/**
 * ValidateFinalizers: each a qualified name. `orphan` (keep the dependents) and
 * `foregroundDeletion` (delete them first) ask the garbage collector for opposite things.
 */
function validateFinalizers(finalizers: unknown, path: string): FieldError[] {
  if (!Array.isArray(finalizers)) return [];
  const names = finalizers.map(String);
  const errors = names.flatMap((name) => validateFinalizerName(name, path));
  if (names.includes("orphan") && names.includes("foregroundDeletion")) {
    errors.push(
      invalid(path, goStringSlice(names), "finalizer orphan and foregroundDeletion cannot be both set"),
    );
  }
  return errors;
}
// #endregion finalizers

// #region validate-object-meta
export interface ObjectMetaOptions {
  /** Core kinds (and apps, scheduling) also require unprefixed finalizers to be standard ones. */
  kubeFinalizers?: boolean;
}

/**
 * ValidateObjectMeta: `nameFn` is the kind's name rule; `requiresNamespace` is its scope.
 * A generateName is checked as a prefix; a missing name is an error only when there is no
 * generateName either (the handler turns a generateName into a name before validation).
 */
export function validateObjectMeta(
  meta: ObjectMeta | undefined,
  requiresNamespace: boolean,
  nameFn: ValidateNameFunc,
  path = "metadata",
  options: ObjectMetaOptions = { kubeFinalizers: true },
): FieldError[] {
  const m = meta ?? {};
  const errors: FieldError[] = [];
  if (m.generateName) {
    for (const message of nameFn(m.generateName, true)) {
      errors.push(invalid(childPath(path, "generateName"), m.generateName, message));
    }
  }
  if (!m.name) {
    errors.push(required(childPath(path, "name"), "name or generateName is required"));
  } else {
    for (const message of nameFn(m.name, false))
      errors.push(invalid(childPath(path, "name"), m.name, message));
  }
  if (requiresNamespace) {
    if (!m.namespace) errors.push(required(childPath(path, "namespace")));
    else {
      for (const message of nameIsDNSLabel(m.namespace, false)) {
        errors.push(invalid(childPath(path, "namespace"), m.namespace, message));
      }
    }
  } else if (m.namespace) {
    errors.push(forbidden(childPath(path, "namespace"), "not allowed on this type"));
  }
  if (typeof m.generation === "number") {
    errors.push(...validateNonnegativeField(m.generation, childPath(path, "generation")));
  }
  errors.push(...validateLabels(m.labels, childPath(path, "labels")));
  errors.push(...validateAnnotations(m.annotations, childPath(path, "annotations")));
  errors.push(...validateOwnerReferences(m.ownerReferences, childPath(path, "ownerReferences")));
  errors.push(...validateFinalizers(m.finalizers, childPath(path, "finalizers")));
  if (options.kubeFinalizers && Array.isArray(m.finalizers)) {
    m.finalizers.forEach((name, i) => {
      errors.push(...validateKubeFinalizerName(String(name), indexPath(childPath(path, "finalizers"), i)));
    });
  }
  return errors;
}

/** Go's time.Time String() for an RFC 3339 UTC timestamp: `2024-01-02 03:04:05 +0000 UTC`. */
function goTime(value: string | undefined): GoValue | null {
  if (value === undefined || value === null) return null;
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2}(?:\.\d+)?)Z$/.exec(value);
  return new GoValue(m ? `${m[1]} ${m[2]} +0000 UTC` : value, value);
}

/** ValidateImmutableField: `field is immutable`, showing the new value. */
export function validateImmutableField(newValue: unknown, oldValue: unknown, path: string): FieldError[] {
  return deepEqual(newValue, oldValue) ? [] : [invalid(path, newValue ?? null, FIELD_IMMUTABLE_ERROR_MSG)];
}

/** ValidateObjectMetaUpdate: identity fixed, generation monotonic, no new finalizers once deleting. */
export function validateObjectMetaUpdate(
  newMeta: ObjectMeta | undefined,
  oldMeta: ObjectMeta | undefined,
  path = "metadata",
  options: ObjectMetaOptions = { kubeFinalizers: true },
): FieldError[] {
  const n = newMeta ?? {};
  const o = oldMeta ?? {};
  const errors: FieldError[] = [];
  if (o.deletionTimestamp) {
    const oldFinalizers = new Set(o.finalizers ?? []);
    const extra = [...new Set(n.finalizers ?? [])].filter((f) => !oldFinalizers.has(f)).sort();
    if (extra.length > 0) {
      errors.push(
        forbidden(
          childPath(path, "finalizers"),
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra).text}`,
        ),
      );
    }
  }
  if (!n.resourceVersion) {
    errors.push(
      invalid(childPath(path, "resourceVersion"), n.resourceVersion ?? "", "must be specified for an update"),
    );
  }
  if ((n.generation ?? 0) < (o.generation ?? 0)) {
    errors.push(invalid(childPath(path, "generation"), n.generation ?? 0, "must not be decremented"));
  }
  errors.push(...validateImmutableField(n.name ?? "", o.name ?? "", childPath(path, "name")));
  errors.push(...validateImmutableField(n.namespace ?? "", o.namespace ?? "", childPath(path, "namespace")));
  errors.push(...validateImmutableField(n.uid ?? "", o.uid ?? "", childPath(path, "uid")));
  if ((n.creationTimestamp ?? null) !== (o.creationTimestamp ?? null)) {
    errors.push(
      invalid(childPath(path, "creationTimestamp"), goTime(n.creationTimestamp), FIELD_IMMUTABLE_ERROR_MSG),
    );
  }
  if ((n.deletionTimestamp ?? null) !== (o.deletionTimestamp ?? null)) {
    errors.push(
      invalid(childPath(path, "deletionTimestamp"), goTime(n.deletionTimestamp), FIELD_IMMUTABLE_ERROR_MSG),
    );
  }
  errors.push(
    ...validateImmutableField(
      n.deletionGracePeriodSeconds ?? null,
      o.deletionGracePeriodSeconds ?? null,
      childPath(path, "deletionGracePeriodSeconds"),
    ),
  );
  errors.push(...validateLabels(n.labels, childPath(path, "labels")));
  errors.push(...validateAnnotations(n.annotations, childPath(path, "annotations")));
  errors.push(...validateOwnerReferences(n.ownerReferences, childPath(path, "ownerReferences")));
  if (options.kubeFinalizers && Array.isArray(n.finalizers)) {
    n.finalizers.forEach((name, i) => {
      errors.push(...validateKubeFinalizerName(String(name), indexPath(childPath(path, "finalizers"), i)));
    });
  }
  return errors;
}
// #endregion validate-object-meta

/** apiequality.Semantic.DeepEqual for JSON: same structure, same scalars; key order ignored. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keysA = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const keysB = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return keysA.length === keysB.length && keysA.every((k) => deepEqual(ra[k], rb[k]));
}

/**
 * What label selectors and node selectors share: `In`/`NotIn` need values, `Exists`/`DoesNotExist`
 * forbid them (upstream writes the rule twice, in ValidateLabelSelectorRequirement and
 * validateNodeSelectorRequirement, with the same messages). Undefined for any other operator:
 * the caller knows which others it allows (a node selector's `Gt`/`Lt`).
 */
export function setOperatorValuesErrors(
  operator: unknown,
  values: string[],
  valuesPath: string,
): FieldError[] | undefined {
  switch (operator) {
    case "In":
    case "NotIn":
      return values.length === 0
        ? [required(valuesPath, "must be specified when `operator` is 'In' or 'NotIn'")]
        : [];
    case "Exists":
    case "DoesNotExist":
      return values.length > 0
        ? [forbidden(valuesPath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")]
        : [];
    default:
      return undefined;
  }
}
