/**
 * WithAuthorization — the second gate: ask the authorizer about the request in the API's words,
 * and answer 403 unless it allows. Upstream: k8s.io/apiserver pkg/endpoints/filters/authorization.go
 * and the Forbidden message of handlers/responsewriters/errors.go.
 *
 * Solves: one decision per request, before any handler reads a body or touches storage; the
 * denial names the user, verb, resource and scope so the user knows what to ask for
 * (`pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace
 * "default"`).
 *
 * Invariants:
 * - only `allow` lets the request through; `deny` and `noOpinion` are both 403;
 * - no authorizer configured is upstream's AlwaysAllow.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/authorization.go (WithAuthorization, GetAuthorizerAttributes)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go (ForbiddenStatusError, forbiddenMessage)
 * @chapter 03-api-security
 */

import type { UserInfo } from "../authn/user.ts";
import type { Attributes, Authorizer } from "../authz/authorizer.ts";
import { newForbidden, type StatusError } from "../errors.ts";
import type { RequestInfo } from "../request-info.ts";

// #region attributes-from-request
/** GetAuthorizerAttributes: the request info and the user, as the authorizer reads them. */
export function authorizerAttributes(user: UserInfo, info: RequestInfo): Attributes {
  return {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  };
}
// #endregion attributes-from-request

// #region with-authorization
export async function authorizeRequest(
  a: Attributes,
  authorizer: Authorizer | undefined,
  /** Chapter 3 audit: the `authorization.k8s.io/decision` and `…/reason` annotations. */
  record?: (decision: "allow" | "forbid", reason: string) => void,
): Promise<string> {
  if (!authorizer) return "";
  const { decision, reason } = await authorizer.authorize(a);
  record?.(decision === "allow" ? "allow" : "forbid", reason);
  if (decision === "allow") return reason;
  throw forbiddenStatusError(a, reason);
}
// #endregion with-authorization

// #region forbidden
/** The 403 upstream writes: `<resource> is forbidden: User "<name>" cannot <verb> …[: reason]`. */
export function forbiddenStatusError(a: Attributes, reason: string): StatusError {
  const msg = forbiddenMessage(a).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return newForbidden(
    { group: a.apiGroup, resource: a.resource },
    a.name,
    reason ? `${msg}: ${reason}` : msg,
  );
}

export function forbiddenMessage(a: Attributes): string {
  const user = JSON.stringify(a.user.name);
  if (!a.isResourceRequest) return `User ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const where = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : "at the cluster scope";
  return `User ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${where}`;
}
// #endregion forbidden
