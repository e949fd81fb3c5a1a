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

import { parse as parseFieldSelector, requiresExactMatch } from "../../api/fields.ts";
import type { UserInfo } from "../authn/user.ts";
import type { Attributes, Authorizer } from "../authz/authorizer.ts";
import { newForbidden, type StatusError } from "../errors.ts";
import type { RequestInfo } from "../request-info.ts";

// #region attributes-from-request
/** GetAuthorizerAttributes: the request info and the user, as the authorizer reads them. */
export function authorizerAttributes(user: UserInfo, info: RequestInfo, query?: URLSearchParams): Attributes {
  const a: Attributes = {
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
  // chapter 3, Node authorizer: the selectors of a collection read (upstream's RequestInfo).
  if (query) Object.assign(a, selectorAttributes(info, query));
  return a;
}

/**
 * RequestInfoFactory's selector facts: a list or watch whose field selector pins
 * `metadata.name` is a read of that one object (a kubelet watching one secret); the raw
 * selectors go to the authorizer, except on the legacy `/watch/` paths, which upstream
 * leaves out because they do not honour selectors consistently.
 */
function selectorAttributes(info: RequestInfo, query: URLSearchParams): Partial<Attributes> {
  const out: Partial<Attributes> = {};
  if (!info.isResourceRequest || !["list", "watch", "deletecollection"].includes(info.verb)) return out;
  const fieldSelector = query.get("fieldSelector") ?? "";
  if (info.name === "" && info.verb !== "deletecollection" && fieldSelector) {
    const parsed = parseFieldSelector(fieldSelector);
    const name = parsed.ok ? requiresExactMatch(parsed.value, "metadata.name") : undefined;
    if (name && isValidPathSegmentName(name)) out.name = name;
  }
  if (/^\/api\/[^/]+\/watch\/|^\/apis\/[^/]+\/[^/]+\/watch\//.test(info.path)) return out;
  if (query.has("fieldSelector")) out.fieldSelector = fieldSelector;
  if (query.has("labelSelector")) out.labelSelector = query.get("labelSelector") ?? "";
  return out;
}

/** path.IsValidPathSegmentName: a name that can stand in a URL path. */
function isValidPathSegmentName(name: string): boolean {
  return name !== "." && name !== ".." && !name.includes("/") && !name.includes("%");
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
