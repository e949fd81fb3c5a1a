/**
 * API errors — every failure the API server reports, as a `Status` with upstream's words.
 * Reason, HTTP code and message are upstream's, from k8s.io/apimachinery pkg/api/errors/errors.go.
 *
 * Solves:
 * - clients branch on `reason` (a controller retries on Conflict, a reflector relists on Expired,
 *   `kubectl apply` creates on NotFound), so the reason and HTTP code must be upstream's exactly;
 * - people read `message`, and kubectl prints it as is (`Error from server (NotFound): pods "web"
 *   not found`), so the words are upstream's too.
 *
 * Invariants:
 * - a StatusError always carries a complete `Status` (kind, apiVersion, status Failure, code);
 * - `details.kind` is the resource (`pods`) except for Invalid, where upstream puts the kind (`Pod`).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go (StatusError, NewNotFound, NewAlreadyExists, NewConflict, NewInvalid, NewBadRequest, NewResourceExpired, NewGone, NewMethodNotSupported, NewRequestEntityTooLargeError, NewInternalError)
 * @chapter 02-apiserver
 */

import { aggregateMessage, errorBody, type FieldError } from "../api/field-errors.ts";
import type { Status, StatusDetails, StatusReason } from "../api/meta.ts";

/** A group and resource (or kind), printed as upstream prints `schema.GroupResource`: `pods`, `deployments.apps`. */
export interface GroupResource {
  group: string;
  resource: string;
}

export function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message ?? status.reason ?? "unknown error");
    this.name = "StatusError";
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError;
}

function failure(code: number, reason: StatusReason, message: string, details?: StatusDetails): StatusError {
  const status: Status = {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    code,
  };
  if (details) status.details = details;
  return new StatusError(status);
}

export const newNotFound = (gr: GroupResource, name: string): StatusError =>
  failure(404, "NotFound", `${qualified(gr)} "${name}" not found`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

export const newAlreadyExists = (gr: GroupResource, name: string): StatusError =>
  failure(409, "AlreadyExists", `${qualified(gr)} "${name}" already exists`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

/** The optimistic-concurrency failure: the client's resourceVersion is not the stored one. */
export const optimisticLockErrorMsg =
  "the object has been modified; please apply your changes to the latest version and try again";

export const newConflict = (gr: GroupResource, name: string, err: string): StatusError =>
  failure(409, "Conflict", `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${err}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

/** 422: `Pod "web" is invalid: spec.containers: Required value`. `kind` is the kind, qualified by group. */
export function newInvalid(
  group: string,
  kind: string,
  name: string,
  errs: readonly FieldError[],
): StatusError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  return failure(422, "Invalid", `${qualifiedKind} "${name}" is invalid: ${aggregateMessage(errs)}`, {
    name,
    group,
    kind,
    causes: errs.map((e) => ({ reason: e.type, message: errorBody(e), field: e.field })),
  });
}

export const newBadRequest = (message: string): StatusError => failure(400, "BadRequest", message);

/** 410 Expired: the revision asked for was compacted (a watch or list too far in the past). */
export const newResourceExpired = (message: string): StatusError => failure(410, "Expired", message);

export const newGone = (message: string): StatusError => failure(410, "Gone", message);

export const newMethodNotSupported = (gr: GroupResource, action: string): StatusError =>
  failure(405, "MethodNotAllowed", `${action} is not supported on resources of kind "${qualified(gr)}"`, {
    group: gr.group,
    kind: gr.resource,
  });

export const newUnsupportedMediaType = (contentType: string, accepted: readonly string[]): StatusError =>
  failure(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
    { kind: contentType },
  );

export const newRequestEntityTooLarge = (limit: number): StatusError =>
  failure(413, "RequestEntityTooLarge", `Request entity too large: limit is ${limit}`);

export const newForbidden = (gr: GroupResource, name: string, err: string): StatusError =>
  failure(
    403,
    "Forbidden",
    name ? `${qualified(gr)} "${name}" is forbidden: ${err}` : `${qualified(gr)} is forbidden: ${err}`,
    { name, group: gr.group, kind: gr.resource },
  );

export const newUnauthorized = (message = "Unauthorized"): StatusError =>
  failure(401, "Unauthorized", message);

export const newNotAcceptable = (message: string): StatusError => failure(406, "NotAcceptable", message);

export const newInternalError = (err: string): StatusError =>
  failure(500, "InternalError", `Internal error occurred: ${err}`, { causes: [{ message: err }] });

export const newTimeoutError = (message: string, retryAfterSeconds: number): StatusError =>
  failure(504, "Timeout", `Timeout: ${message}`, { retryAfterSeconds });
