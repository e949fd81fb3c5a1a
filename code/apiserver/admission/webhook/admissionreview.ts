/**
 * AdmissionReview v1 — the request the API server sends a webhook, and the checks on the
 * answer before anything in it is believed. Upstream: k8s.io/apiserver
 * pkg/admission/plugin/webhook/request/admissionreview.go (CreateV1AdmissionReview,
 * VerifyAdmissionResponse), types in k8s.io/api admission/v1/types.go.
 *
 * Solves:
 * - the webhook sees what admission sees: who (userInfo), what (kind, resource, subresource,
 *   name, namespace, operation), the object before and after, the options, and whether it is a
 *   dry run — everything a policy may need, in one JSON document;
 * - the answer must be for this request (`response.uid` equal to `request.uid`): a webhook that
 *   mixes up two concurrent reviews cannot allow the wrong one;
 * - a mutating answer gives `patch` and `patchType` together; a validating answer gives neither.
 *
 * Invariants:
 * - `kind`/`resource` are what the webhook's rule matched (an equivalent resource under
 *   matchPolicy Equivalent); `requestKind`/`requestResource` are what the client sent;
 * - `object` and `oldObject` are null when absent (a create has no old object, a delete no new
 *   one); `dryRun` is always present;
 * - `patch` is base64 in JSON (Go's []byte): anything else is a decode error of the answer.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go (CreateV1AdmissionReview, VerifyAdmissionResponse, AdmissionResponse)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/admission/v1/types.go (AdmissionReview, AdmissionRequest, AdmissionResponse)
 * @chapter 03-api-security
 */
import type { Status } from "../../../api/meta.ts";
import type { Attributes } from "../interfaces.ts";

/** What a rule matched: the request's own resource, or an equivalent one. */
export interface WebhookInvocation {
  resource: Attributes["resource"];
  subresource: string;
  kind: Attributes["kind"];
}

export const admissionV1 = "admission.k8s.io/v1";

// #region create-review
export function createV1AdmissionReview(uid: string, a: Attributes, invocation: WebhookInvocation) {
  const request: Record<string, unknown> = {
    uid,
    kind: invocation.kind,
    resource: invocation.resource,
  };
  if (invocation.subresource) request.subResource = invocation.subresource;
  request.requestKind = a.kind;
  request.requestResource = a.resource;
  if (a.subresource) request.requestSubResource = a.subresource;
  if (a.name) request.name = a.name;
  if (a.namespace) request.namespace = a.namespace;
  request.operation = a.operation;
  const user: Record<string, unknown> = { username: a.userInfo.name };
  if (a.userInfo.uid) user.uid = a.userInfo.uid;
  if (a.userInfo.groups.length > 0) user.groups = a.userInfo.groups;
  if (a.userInfo.extra && Object.keys(a.userInfo.extra).length > 0) user.extra = a.userInfo.extra;
  request.userInfo = user;
  request.object = a.object ?? null;
  request.oldObject = a.oldObject ?? null;
  request.dryRun = a.dryRun;
  request.options = a.options ?? null;
  return { apiVersion: admissionV1, kind: "AdmissionReview", request };
}
// #endregion create-review

/** The fields of a response the dispatchers act on. */
export interface AdmissionResponse {
  allowed: boolean;
  /** The decoded JSON patch bytes (empty: no patch). */
  patch: Buffer;
  patchType: string;
  result?: Partial<Status>;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** A response that is not an answer to our request; the reason is upstream's text. */
export class InvalidResponseError extends Error {
  override readonly name = "InvalidResponseError";
}

/** The answer does not decode into an AdmissionReview (Go's json.Unmarshal failed). */
export class DecodeError extends Error {
  override readonly name = "DecodeError";
}

const base64Strict = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `response.patch` as Go decodes a []byte field: a base64 string, strictly. */
function decodePatchBytes(raw: unknown): Buffer {
  if (raw === undefined || raw === null || raw === "") return Buffer.alloc(0);
  if (typeof raw !== "string") {
    const type = Array.isArray(raw) ? "array" : typeof raw === "object" ? "object" : typeof raw;
    throw new DecodeError(
      `json: cannot unmarshal ${type} into Go struct field AdmissionResponse.response.patch of type []uint8`,
    );
  }
  if (!base64Strict.test(raw)) {
    const bad = raw.search(/[^A-Za-z0-9+/=]/);
    throw new DecodeError(`illegal base64 data at input byte ${bad >= 0 ? bad : raw.length}`);
  }
  return Buffer.from(raw, "base64");
}

// #region verify-response
/**
 * VerifyAdmissionResponse: the answer is an AdmissionReview v1 with a response for `uid`; a
 * mutating one carries patch and patchType together, a validating one neither. Throws
 * DecodeError for a patch that is not base64 (upstream: the client's decode fails, "failed to
 * call webhook") and InvalidResponseError for the rest ("received invalid webhook response").
 */
export function verifyAdmissionResponse(uid: string, mutating: boolean, review: unknown): AdmissionResponse {
  const r = (review ?? {}) as Record<string, unknown>;
  const response = r.response as Record<string, unknown> | undefined | null;
  // Go decodes the whole answer before looking at it: a bad patch fails first.
  const patch = decodePatchBytes(response?.patch);
  if (!response) throw new InvalidResponseError("webhook response was absent");
  const got = (response.uid as string | undefined) ?? "";
  if (got !== uid) throw new InvalidResponseError(`expected response.uid="${uid}", got "${got}"`);
  const apiVersion = (r.apiVersion as string | undefined) ?? "";
  const kind = (r.kind as string | undefined) ?? "";
  if (apiVersion !== admissionV1 || kind !== "AdmissionReview") {
    throw new InvalidResponseError(
      `expected webhook response of ${admissionV1}, Kind=AdmissionReview, got ${apiVersion}, Kind=${kind}`,
    );
  }
  const patchType = response.patchType as string | undefined | null;
  if (mutating) {
    if (patch.length > 0 && patchType == null)
      throw new InvalidResponseError("webhook returned response.patch but not response.patchType");
    if (patch.length === 0 && patchType != null)
      throw new InvalidResponseError("webhook returned response.patchType but not response.patch");
    if (patchType === "") throw new InvalidResponseError(`webhook returned invalid response.patchType of ""`);
  } else {
    if (patch.length > 0) throw new InvalidResponseError("validating webhook may not return response.patch");
    if (patchType != null)
      throw new InvalidResponseError("validating webhook may not return response.patchType");
  }
  return {
    allowed: response.allowed === true,
    patch: mutating ? patch : Buffer.alloc(0),
    patchType: patchType ?? "",
    result: (response.status as Partial<Status> | undefined) ?? undefined,
    warnings: Array.isArray(response.warnings) ? (response.warnings as unknown[]).map(String) : [],
    auditAnnotations: (response.auditAnnotations as Record<string, string> | undefined) ?? {},
  };
}
// #endregion verify-response
