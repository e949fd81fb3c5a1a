/**
 * API errors — every failure the API server reports, as a `Status` with upstream's words: one
 * constructor per kind of failure, named as upstream names it, and nowhere else. Reason, HTTP code
 * and message are upstream's, from k8s.io/apimachinery pkg/api/errors/errors.go.
 *
 * Solves:
 * - clients branch on `reason` (a controller retries on Conflict, a reflector relists on Expired,
 *   `kubectl apply` creates on NotFound), so the reason and HTTP code must be upstream's exactly;
 * - people read `message`, and kubectl prints it as is (`Error from server (NotFound): pods "web"
 *   not found`), so the words are upstream's too;
 * - every layer (routing, handlers, registry, storage, patch libraries) builds its failures here,
 *   so a Status looks the same whoever raised it.
 *
 * Invariants:
 * - a StatusError always carries a complete `Status` (kind, apiVersion, status Failure, code);
 * - `details.kind` is the resource (`pods`) except for Invalid, where upstream puts the kind (`Pod`);
 * - `details` is left out when upstream's constructor sets none, and holds only the fields set
 *   when it does (Go's omitempty).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/errors/errors.go (StatusError, NewNotFound, NewAlreadyExists, NewUnauthorized, NewForbidden, NewConflict, NewApplyConflict, NewGone, NewResourceExpired, NewInvalid, NewBadRequest, NewTooManyRequests, NewMethodNotSupported, NewInternalError, NewTimeoutError, NewRequestEntityTooLargeError, NewGenericServerResponse)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/errors.go (NewNotAcceptableError, NewUnsupportedMediaTypeError)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/status.go (ErrorToAPIStatus: an error that is not a Status)
 * @chapter 02-apiserver
 */

import { aggregateMessage, errorBody, type FieldError } from "../api/field-errors.ts";
import type { Status, StatusCause, StatusDetails, StatusReason } from "../api/meta.ts";

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

/** 410 Gone, reason Expired: the revision asked for was compacted (a watch or list too far in the past). */
export const newResourceExpired = (message: string): StatusError => failure(410, "Expired", message);

export const newGone = (message: string): StatusError => failure(410, "Gone", message);

export const newMethodNotSupported = (gr: GroupResource, action: string): StatusError =>
  failure(405, "MethodNotAllowed", `${action} is not supported on resources of kind "${qualified(gr)}"`, {
    group: gr.group,
    kind: gr.resource,
  });

export const newTooManyRequests = (message: string, retryAfterSeconds: number): StatusError =>
  failure(429, "TooManyRequests", message, { retryAfterSeconds });

export const newRequestEntityTooLargeError = (message: string): StatusError =>
  failure(413, "RequestEntityTooLarge", `Request entity too large: ${message}`);

export const newForbidden = (gr: GroupResource, name: string, err: string): StatusError =>
  failure(
    403,
    "Forbidden",
    // A non-resource request (`/healthz`) has no resource to name: `forbidden: …`.
    !gr.resource
      ? `forbidden: ${err}`
      : name
        ? `${qualified(gr)} "${name}" is forbidden: ${err}`
        : `${qualified(gr)} is forbidden: ${err}`,
    { name, group: gr.group, kind: gr.resource },
  );

export const newUnauthorized = (message = "Unauthorized"): StatusError =>
  failure(401, "Unauthorized", message);

export const newInternalError = (err: string): StatusError =>
  failure(500, "InternalError", `Internal error occurred: ${err}`, { causes: [{ message: err }] });

export const newTimeoutError = (message: string, retryAfterSeconds: number): StatusError =>
  failure(504, "Timeout", `Timeout: ${message}`, { retryAfterSeconds });

/** NewApplyConflict: server-side apply's 409, one cause per conflicting field. */
export const newApplyConflict = (causes: StatusCause[], message: string): StatusError =>
  failure(409, "Conflict", message, { causes });

// #region negotiation-errors
/** negotiation.NewNotAcceptableError: no media type in Accept is one the server can answer in. */
export const newNotAcceptableError = (accepted: readonly string[]): StatusError =>
  failure(406, "NotAcceptable", `only the following media types are accepted: ${accepted.join(", ")}`);

/** negotiation.NewUnsupportedMediaTypeError: a body in a format the server cannot read. */
export const newUnsupportedMediaTypeError = (accepted: readonly string[]): StatusError =>
  failure(
    415,
    "UnsupportedMediaType",
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(", ")}`,
  );
// #endregion negotiation-errors

// #region generic-server-response
/**
 * NewGenericServerResponse: a Status for an answer that carries no Status of its own — go-restful's
 * 404 and 405 for a path no route serves, the PATCH handler's 422 for a patch that does not apply.
 * Each code has a fixed message; the server's own message is kept only where upstream keeps it
 * (403, 406, 415, and quoted in a 5xx). A resource, when given, is named after the message.
 */
export function newGenericServerResponse(
  code: number,
  verb: string,
  gr: GroupResource,
  name: string,
  serverMessage: string,
  retryAfterSeconds: number,
  isUnexpectedResponse: boolean,
): StatusError {
  const [reason, text] = genericReasonAndMessage(code, verb, serverMessage);
  let message = text;
  if (gr.resource && name) message = `${text} (${verb.toLowerCase()} ${qualified(gr)} ${name})`;
  else if (gr.resource) message = `${text} (${verb.toLowerCase()} ${qualified(gr)})`;
  // Every field of upstream's StatusDetails is omitempty: only what is set shows.
  const details: StatusDetails = {};
  if (gr.group) details.group = gr.group;
  if (gr.resource) details.kind = gr.resource;
  if (name) details.name = name;
  if (isUnexpectedResponse) details.causes = [{ reason: "UnexpectedServerResponse", message: serverMessage }];
  if (retryAfterSeconds) details.retryAfterSeconds = retryAfterSeconds;
  return failure(code, reason, message, details);
}

function genericReasonAndMessage(code: number, verb: string, serverMessage: string): [StatusReason, string] {
  switch (code) {
    case 409:
      return [verb === "POST" ? "AlreadyExists" : "Conflict", "the server reported a conflict"];
    case 404:
      return ["NotFound", "the server could not find the requested resource"];
    case 400:
      return ["BadRequest", "the server rejected our request for an unknown reason"];
    case 401:
      return ["Unauthorized", "the server has asked for the client to provide credentials"];
    case 403:
      return ["Forbidden", serverMessage];
    case 406:
      return [
        "NotAcceptable",
        serverMessage === "" || serverMessage === "unknown"
          ? "the server was unable to respond with a content type that the client supports"
          : serverMessage,
      ];
    case 415:
      return ["UnsupportedMediaType", serverMessage];
    case 405:
      return ["MethodNotAllowed", "the server does not allow this method on the requested resource"];
    case 422:
      return ["Invalid", "the server rejected our request due to an error in our request"];
    case 503:
      return ["ServiceUnavailable", "the server is currently unable to handle the request"];
    case 504:
      return [
        "Timeout",
        "the server was unable to return a response in the time allotted, but may still be processing the request",
      ];
    case 429:
      return [
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
      ];
    default:
      if (code >= 500) {
        return [
          "InternalError",
          `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`,
        ];
      }
      return ["", `the server responded with the status code ${code} but did not return more information`];
  }
}
// #endregion generic-server-response

/**
 * ErrorToAPIStatus for an error that is not a Status (a storage or library failure upstream
 * returns as a plain Go error): 500, the Unknown reason (""), and the error's own text.
 */
export function errorToAPIStatus(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return failure(500, "", message);
}
