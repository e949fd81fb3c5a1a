/**
 * Webhook errors — the two ways a webhook call goes wrong, and the Status the client sees for
 * each. Upstream: k8s.io/apiserver pkg/util/webhook/error.go (ErrCallingWebhook,
 * ErrWebhookRejection) and pkg/admission/plugin/webhook/errors/statuserror.go (ToStatusErr,
 * NewDryRunUnsupportedErr).
 *
 * Solves:
 * - "the webhook said no" and "we could not ask the webhook" are different facts: only the
 *   second is subject to `failurePolicy` (Ignore lets the request through, Fail refuses it with
 *   `failed calling webhook "x": …`);
 * - a denial carries the webhook's own `status` (its code and message) to the client, prefixed
 *   with the webhook's name, so a user reading kubectl's error knows whom to ask.
 *
 * Invariants:
 * - a denial's code is at least 400 (a webhook answering 200 with allowed=false still fails the
 *   request); its status is Failure; its message starts `admission webhook "<name>" denied the request`;
 * - refusing a dry run to a webhook with side effects is a 400 whatever the failure policy.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/webhook/error.go (ErrCallingWebhook, ErrWebhookRejection)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/errors/statuserror.go (ToStatusErr, NewDryRunUnsupportedErr)
 * @chapter 03-api-security
 */
import type { Status } from "../../../api/meta.ts";
import { newBadRequest, newInternalError, StatusError } from "../../errors.ts";

// #region calling-webhook
/** A transport-level failure: the webhook could not be asked, or its answer made no sense. */
export class ErrCallingWebhook extends Error {
  override readonly name = "ErrCallingWebhook";
  constructor(
    readonly webhookName: string,
    readonly reason: string,
  ) {
    super(`failed calling webhook "${webhookName}": ${reason}`);
  }

  /** What failurePolicy Fail returns: a 500 with the whole story. */
  toStatusError(): StatusError {
    return newInternalError(this.message);
  }
}
// #endregion calling-webhook

// #region to-status-err
/** ToStatusErr: the webhook's `status` as the client will see it, named and at least a 400. */
export function toStatusErr(webhookName: string, result: Partial<Status> | undefined): StatusError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const r: Partial<Status> = { ...(result ?? {}) };
  if (!r.code || r.code < 400) r.code = 400;
  if (!r.status || r.status === "Success") r.status = "Failure";
  if (r.message) r.message = `${deniedBy}: ${r.message}`;
  else if (r.reason) r.message = `${deniedBy}: ${r.reason}`;
  else r.message = `${deniedBy} without explanation`;
  return new StatusError({ kind: "Status", apiVersion: "v1", metadata: {}, ...r } as Status);
}
// #endregion to-status-err

export function newDryRunUnsupportedErr(webhookName: string): StatusError {
  return newBadRequest(`admission webhook "${webhookName}" does not support dry run`);
}

/** NewServiceUnavailable: a 503 (no endpoint for a webhook's service). */
export function newServiceUnavailable(message: string): StatusError {
  return new StatusError({
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: "ServiceUnavailable",
    code: 503,
  });
}
