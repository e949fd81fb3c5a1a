/**
 * RESTStrategy — what is special about one resource, asked by the registry store at each step.
 * Upstream splits it into RESTCreateStrategy, RESTUpdateStrategy and RESTGracefulDeleteStrategy
 * (k8s.io/apiserver pkg/registry/rest/create.go, update.go, delete.go). Which strategy serves which
 * resource is rest-storage.ts's table.
 *
 * Solves:
 * - the store is one piece of code for every resource, yet a pod must start `Pending` whatever
 *   the client sent, a Deployment's `metadata.generation` must move when (and only when) its
 *   spec changes, a namespace is born with the `kubernetes` finalizer, and a pod bound to a
 *   node is deleted gracefully: each of these answers lives in the resource's strategy;
 * - users own the spec, controllers own the status: a write to the main resource keeps the
 *   stored status, a write to `/status` keeps the stored spec, so neither side can clobber
 *   the other's half with a stale copy;
 * - field selectors (`spec.nodeName=node-1`) need the few fields each resource lets a list or
 *   watch filter on.
 *
 * Invariants:
 * - prepareForCreate / prepareForUpdate only mutate `obj` (never `old`), and run before
 *   validate / validateUpdate, which only read;
 * - the store copies the server-owned metadata (uid, creationTimestamp, deletionTimestamp,
 *   generation) from `old` before prepareForUpdate, so a strategy that does not bump the
 *   generation leaves the stored one (upstream rest.BeforeUpdate);
 * - `status`, when present, is a whole strategy (upstream's status strategies embed the main
 *   one): everything it does not override — scope, create-on-update, fields — is the main one's;
 * - selectableFields(obj) returns the same keys for every object of the resource, including
 *   an empty `{metadata: {}}`; a field the object lacks reads as "".
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/create.go (RESTCreateStrategy: NamespaceScoped, PrepareForCreate, Validate, Canonicalize)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/update.go (RESTUpdateStrategy: AllowCreateOnUpdate, PrepareForUpdate, ValidateUpdate, AllowUnconditionalUpdate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go (RESTGracefulDeleteStrategy: CheckGracefulDelete)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (AddFieldLabelConversionsForPod, …: the field labels each kind accepts)
 * @chapter 02-apiserver
 */
import type { FieldError } from "../../api/field-errors.ts";
import type { KubeObject } from "../../api/meta.ts";

// #region rest-strategy
/** The part of DeleteOptions a graceful delete reads and settles. */
export interface GracefulDeleteOptions {
  gracePeriodSeconds?: number;
}

export interface RESTStrategy {
  /** Objects live in a namespace (pods) or beside them (nodes, namespaces). */
  namespaceScoped: boolean;
  /** Clear what a client may not set on create: status (when it is a subresource), generation 1, … */
  prepareForCreate(obj: KubeObject): void;
  /** Keep what a write to the main resource may not change (the status); bump generation on spec changes. */
  prepareForUpdate(obj: KubeObject, old: KubeObject): void;
  validate(obj: KubeObject): FieldError[];
  validateUpdate(obj: KubeObject, old: KubeObject): FieldError[];
  /**
   * Normalize after validation, on create and update (upstream Canonicalize). Namespaces use it
   * to label themselves `kubernetes.io/metadata.name=<name>` once generateName has settled the name.
   */
  canonicalize?(obj: KubeObject): void;
  /** May a PUT create the object when it does not exist (upstream AllowCreateOnUpdate)? */
  allowCreateOnUpdate: boolean;
  /** May an update omit metadata.resourceVersion, last writer wins (upstream AllowUnconditionalUpdate)? */
  allowUnconditionalUpdate: boolean;
  /** The values a field selector tests (upstream GetAttrs / ToSelectableFields), name and namespace included. */
  selectableFields(obj: KubeObject): Record<string, string>;
  /** The field labels a `?fieldSelector=` may name (upstream's field label conversion functions). */
  fieldLabels: readonly string[];
  /** Old spellings a field selector may still use, mapped to the field they mean (pods: `spec.host`). */
  fieldLabelAliases?: Readonly<Record<string, string>>;
  /** The strategy of the `status` subresource, when the resource has one. */
  status?: RESTStrategy;
  /**
   * Graceful deletion (upstream CheckGracefulDelete): returns true when the delete should be
   * graceful, and settles `options.gracePeriodSeconds` to the period to wait (0 = now).
   * Absent: the object is deleted at once (or waits only for its finalizers).
   */
  checkGracefulDelete?(obj: KubeObject, options: GracefulDeleteOptions): boolean;
}
// #endregion rest-strategy

// #region field-labels
/**
 * The selectable field a field-selector label means for this resource, or undefined when the
 * resource does not support it — the API server then answers 400 `field label not supported: <label>`.
 */
export function convertFieldLabel(strategy: RESTStrategy, label: string): string | undefined {
  if (strategy.fieldLabels.includes(label)) return label;
  return strategy.fieldLabelAliases?.[label];
}
// #endregion field-labels
