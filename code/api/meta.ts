/**
 * Object metadata — the fields every Kubernetes object shares, and the shapes the API speaks
 * besides objects: lists, watch events and `Status`.
 * Upstream: apimachinery's pkg/apis/meta/v1/types.go, which every Go client shares.
 *
 * Solves:
 * - every layer (API server, client, controllers, kubelet) reads `metadata.name`,
 *   `metadata.resourceVersion`, `metadata.labels` the same way, whatever the kind;
 * - objects travel as JSON: the API server stores and serves the JSON a client sent (after
 *   defaulting), so a kind is a plain object with `apiVersion`, `kind`, `metadata` and whatever
 *   else its type declares. Typed views of kinds live beside this file (core.ts, apps.ts, …).
 *
 * Invariants:
 * - `resourceVersion` is an opaque string to clients; inside the API server it is the decimal
 *   etcd revision at which the object was last written (its `mod_revision`);
 * - `Status` is the body of every error answer, with `kind: "Status"`, `apiVersion: "v1"`.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go (TypeMeta, ObjectMeta, ListMeta, OwnerReference, Status, StatusDetails, StatusCause, WatchEvent)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/watch/watch.go (EventType: Added, Modified, Deleted, Bookmark, Error)
 * @chapter 02-apiserver
 */

// #region object-meta
export interface TypeMeta {
  apiVersion?: string;
  kind?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** One manager's claim on fields (server-side apply): `fieldsV1` is the set of fields it owns. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: "Apply" | "Update";
  apiVersion?: string;
  time?: string;
  fieldsType?: "FieldsV1";
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  /** The etcd revision of the object's last write, as a decimal string. */
  resourceVersion?: string;
  /** Bumped by the API server when the spec (not the status or metadata) changes. */
  generation?: number;
  creationTimestamp?: string;
  /** Set when deletion was requested but finalizers or a grace period keep the object. */
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

/** Any object of any kind, as JSON. */
export interface KubeObject extends TypeMeta {
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface KubeList<T extends KubeObject = KubeObject> extends TypeMeta {
  metadata: ListMeta;
  items: T[];
}
// #endregion object-meta

// #region status
// A failed request's `reason` is what a client branches on, because the HTTP code alone is
// ambiguous: 409 is AlreadyExists (create) or Conflict (stale resourceVersion, retry); 410 is Gone
// or Expired (too old a resourceVersion — a reflector lists again).
export type StatusReason =
  | "BadRequest"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Expired"
  | "Invalid"
  | "MethodNotAllowed"
  | "NotAcceptable"
  | "RequestEntityTooLarge"
  | "UnsupportedMediaType"
  | "TooManyRequests"
  | "InternalError"
  | "Timeout"
  | "ServiceUnavailable"
  | "";

export interface StatusCause {
  /** A field.ErrorType string such as "FieldValueRequired". */
  reason?: string;
  message?: string;
  /** The JSON path of the field, such as `spec.containers[0].image`. */
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  /** The resource (`pods`) for most errors; the kind (`Pod`) for Invalid, as upstream. */
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: "Status";
  apiVersion: "v1";
  metadata: ListMeta;
  status: "Success" | "Failure";
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}
// #endregion status

// #region watch-event
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/** One line of a watch response: for ERROR the object is a Status. */
export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T | Status;
}
// #endregion watch-event
