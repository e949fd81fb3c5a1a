/**
 * Result — how an HTTP answer becomes a value or a StatusError.
 * Mirrors client-go rest/request.go (transformResponse, Result.Error, newUnstructuredResponseError)
 * and apimachinery pkg/api/errors/errors.go (NewGenericServerResponse).
 *
 * Solves:
 * - a caller branches on the server's `Status` (`isNotFound`, `isConflict`, `isResourceExpired`),
 *   so a failure answer that is a Status is kept whole — code, reason, message, details;
 * - a failure that is not a Status (a proxy's HTML page, an empty 503) still becomes a
 *   StatusError, with the reason its code implies and a message naming the verb and resource,
 *   so the caller has one shape to handle;
 * - a 409 without a Status is AlreadyExists for a POST and Conflict otherwise, as upstream.
 *
 * Invariants:
 * - 2xx: the body parsed as JSON (undefined when empty);
 * - anything else: a StatusError; its Status is the server's if the body was a Status with
 *   `status: "Failure"`, else synthesized (NewGenericServerResponse) with the answer's text,
 *   capped at 2048 bytes, as the cause message;
 * - `Retry-After` seconds go into `details.retryAfterSeconds` of a synthesized Status.
 *
 * @upstream kubernetes/client-go rest/request.go (transformResponse, Result.Error, newUnstructuredResponseError, isTextResponse, maxUnstructuredResponseTextBytes)
 * @upstream kubernetes/apimachinery pkg/api/errors/errors.go (NewGenericServerResponse)
 * @chapter 04-informers
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Status, StatusReason } from "../../api/meta.ts";
import { newStatusError, StatusError } from "../errors.ts";
import { retryAfterSeconds } from "./with-retry.ts";

/** What a request names, for messages such as `(get pods web-1)`. */
export interface RequestTarget {
  verb: string;
  /** `pods`, or `replicasets.apps` for a group resource. */
  resource?: string;
  name?: string;
}

const maxUnstructuredResponseTextBytes = 2048;

// #region transform-response
/** The value of a 2xx answer, or the StatusError of any other. */
export function transformResponse(
  statusCode: number,
  headers: IncomingHttpHeaders,
  body: Buffer,
  target: RequestTarget,
): unknown {
  if (statusCode >= 200 && statusCode <= 206) {
    if (body.length === 0) return undefined;
    try {
      return JSON.parse(body.toString("utf8"));
    } catch (e) {
      throw syntheticStatus(
        500,
        "InternalError",
        `the server answered ${statusCode} with a body that is not JSON: ${(e as Error).message}`,
      );
    }
  }
  const status = asFailureStatus(body);
  if (status) throw new StatusError({ ...status, code: status.code || statusCode });
  throw newUnstructuredResponseError(statusCode, headers, body, target);
}
// #endregion transform-response

/** The body as a Status, if it is one that reports a failure (Result.Error). */
function asFailureStatus(body: Buffer): Status | undefined {
  try {
    const obj = JSON.parse(body.toString("utf8"));
    // Old servers may omit apiVersion; the kind and `status: Failure` are what count.
    if (obj && obj.kind === "Status" && obj.status === "Failure") return obj as Status;
  } catch {
    // not JSON: an unstructured answer
  }
  return undefined;
}

// #region unstructured-error
/** NewGenericServerResponse: the Status a client makes up for an answer that was not one. */
export function newUnstructuredResponseError(
  code: number,
  headers: IncomingHttpHeaders,
  body: Buffer,
  target: RequestTarget,
): StatusError {
  const contentType = String(headers["content-type"] ?? "");
  const isText = contentType === "" || contentType.startsWith("text/");
  const serverMessage = isText
    ? body.subarray(0, maxUnstructuredResponseTextBytes).toString("utf8").trim()
    : "unknown";
  let [reason, message] = genericReason(code, target.verb, serverMessage);
  if (target.resource) {
    const what = [target.verb.toLowerCase(), target.resource, target.name].filter(Boolean).join(" ");
    message = `${message} (${what})`;
  }
  const retryAfter = retryAfterSeconds(headers);
  return new StatusError({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason,
    details: {
      ...(target.name ? { name: target.name } : {}),
      ...(target.resource ? { kind: target.resource } : {}),
      causes: [{ reason: "UnexpectedServerResponse", message: serverMessage }],
      ...(retryAfter ? { retryAfterSeconds: retryAfter } : {}),
    },
    code,
  });
}

function genericReason(code: number, verb: string, serverMessage: string): [StatusReason, string] {
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
    case 405:
      return ["MethodNotAllowed", "the server does not allow this method on the requested resource"];
    case 415:
      return ["UnsupportedMediaType", serverMessage];
    case 422:
      return ["Invalid", "the server rejected our request due to an error in our request"];
    case 429:
      return [
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
      ];
    case 503:
      return ["ServiceUnavailable", "the server is currently unable to handle the request"];
    case 504:
      return [
        "Timeout",
        "the server was unable to return a response in the time allotted, but may still be processing the request",
      ];
  }
  if (code >= 500)
    return [
      "InternalError",
      `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`,
    ];
  return ["", `the server responded with the status code ${code} but did not return more information`];
}
// #endregion unstructured-error

/** A Status for a failure on our side of the wire: no answer (code 0), or one we cannot read. */
export function syntheticStatus(code: number, reason: StatusReason, message: string): StatusError {
  return newStatusError(code, message, { reason });
}
