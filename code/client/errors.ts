/**
 * StatusError — a failed request as the client sees it: the server's `Status`, kept whole.
 * Mirrors k8s.io/apimachinery pkg/api/errors/errors.go on the client side (StatusError and the
 * Is* predicates that client-go callers branch on).
 *
 * Solves:
 * - a reflector must tell "your resourceVersion is too old, list again" (410 Expired or Gone)
 *   from "the server is busy, back off" (429, or a 5xx) from "you are not allowed" (403); the
 *   HTTP code alone is ambiguous, so the error carries the Status with its `reason`;
 * - an error from a server that answered something other than a Status (a proxy's HTML page, a
 *   dropped connection) is still a StatusError, with a synthesized Status, as client-go's
 *   newUnstructuredResponseError does — callers need one shape.
 *
 * Invariants: `code` and `reason` are always set (reason "" only when the server gave none and
 * the code maps to none).
 *
 * @upstream kubernetes/apimachinery pkg/api/errors/errors.go (StatusError, IsNotFound, IsConflict, IsResourceExpired, IsGone, IsTooManyRequests, SuggestsClientDelay)
 * @upstream kubernetes/client-go rest/request.go (newUnstructuredResponseError)
 * @chapter 04-informers
 */

import type { Status, StatusReason } from "../api/meta.ts";

// #region status-error
export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.message || `the server answered ${status.code} ${status.reason || ""}`.trim());
    this.name = "StatusError";
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): StatusReason {
    return this.status.reason ?? "";
  }
}
// #endregion status-error

// The reason a code implies when the server did not say (errors.go reasonForCode).
const reasonForCode: Record<number, StatusReason> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Gone",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

/**
 * A StatusError for an answer that was not a Status (or no answer at all: code 0); the reason is
 * the one the code implies unless given.
 */
export function newStatusError(
  code: number,
  message: string,
  { reason, retryAfterSeconds }: { reason?: StatusReason; retryAfterSeconds?: number } = {},
): StatusError {
  return new StatusError({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: reason ?? reasonForCode[code] ?? "",
    ...(retryAfterSeconds !== undefined ? { details: { retryAfterSeconds } } : {}),
    code,
  });
}

function statusOf(err: unknown): StatusError | undefined {
  return err instanceof StatusError ? err : undefined;
}

export const isNotFound = (err: unknown) => statusOf(err)?.reason === "NotFound";
export const isAlreadyExists = (err: unknown) => statusOf(err)?.reason === "AlreadyExists";
export const isConflict = (err: unknown) => statusOf(err)?.reason === "Conflict";
export const isForbidden = (err: unknown) => statusOf(err)?.reason === "Forbidden";
export const isInvalid = (err: unknown) => statusOf(err)?.reason === "Invalid";
/** 410 with reason Expired: a list's continue token or a watch's resourceVersion is too old. */
export const isResourceExpired = (err: unknown) => statusOf(err)?.reason === "Expired";
/** 410 with reason Gone: the watch's resourceVersion was compacted away. */
export const isGone = (err: unknown) => statusOf(err)?.reason === "Gone";
export const isTooManyRequests = (err: unknown) => {
  const s = statusOf(err);
  return s !== undefined && (s.reason === "TooManyRequests" || s.code === 429);
};

/** Seconds the server asked the client to wait (details.retryAfterSeconds), if any. */
export function suggestsClientDelay(err: unknown): number | undefined {
  const s = statusOf(err)?.status;
  const secs = s?.details?.retryAfterSeconds;
  return typeof secs === "number" && secs > 0 ? secs : undefined;
}
