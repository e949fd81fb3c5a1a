/**
 * WithImpersonation — between authentication and authorization: a user who may impersonate
 * asks, with `Impersonate-*` headers, to be treated as someone else for this one request
 * (`kubectl --as=jane --as-group=dev get pods`). Upstream: k8s.io/apiserver
 * pkg/endpoints/filters/impersonation.go.
 *
 * Solves:
 * - an admin checks what jane sees, a proxy acts for the users it fronts, without holding
 *   their credentials;
 * - impersonation is itself authorized, one attribute at a time: the user name, each group,
 *   each extra value and the uid is a separate `impersonate` check (on `users`, `groups`,
 *   `userextras/<key>`, `uids`; a service-account user on `serviceaccounts` in its namespace).
 *   Being allowed to become jane does not allow adding `system:masters` to her groups — one
 *   all-or-nothing check would be a path to any privilege.
 *
 * Invariants:
 * - without `Impersonate-*` headers the request's user is unchanged;
 * - groups, extra or a uid without `Impersonate-User` is a 400 (there is no one to give them to);
 * - the first attribute denied ends the request with 403, upstream's message
 *   (`users "jane" is forbidden: User "bob" cannot impersonate resource "users" in API group ""
 *   at the cluster scope`);
 * - the new user gets `system:authenticated` (or, for `system:anonymous`,
 *   `system:unauthenticated`) unless the requested groups already say which; a service account
 *   impersonated without groups gets its fixed groups;
 * - the `Impersonate-*` headers are removed: nothing after this gate sees them.
 *
 * What upstream does differently: a malformed request (groups without a user) is a 500
 * InternalError in upstream; here it is a 400, since it is the client's mistake and the server
 * answers no 5xx to bad input. Upstream also writes "bob is impersonating jane" to its request
 * log; the audit event records both users, as upstream (server.ts calls logImpersonatedUser).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go (WithImpersonation, buildImpersonationRequests, unescapeExtraKey)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/authentication/v1/types.go (ImpersonateUserHeader, ImpersonateGroupHeader, ImpersonateUIDHeader, ImpersonateUserExtraHeaderPrefix)
 * @chapter 03-api-security
 */
import type { IncomingMessage } from "node:http";
import { makeGroupNames, makeUsername, splitUsername } from "../authn/serviceaccount/user.ts";
import { AllAuthenticated, AllUnauthenticated, Anonymous, type UserInfo } from "../authn/user.ts";
import type { Attributes, Authorizer } from "../authz/authorizer.ts";
import { newBadRequest } from "../errors.ts";
import { forbiddenStatusError } from "./authorization.ts";

export const ImpersonateUserHeader = "impersonate-user";
export const ImpersonateGroupHeader = "impersonate-group";
export const ImpersonateUIDHeader = "impersonate-uid";
export const ImpersonateUserExtraHeaderPrefix = "impersonate-extra-";

// #region impersonation-requests
/** One thing the requestor asks to become; each is authorized on its own. */
export interface ImpersonationRequest {
  kind: "User" | "ServiceAccount" | "Group" | "UserExtra" | "UID";
  name: string;
  namespace?: string;
  /** UserExtra: the extra key (upstream keeps it in ObjectReference.FieldPath). */
  extraKey?: string;
}

/** buildImpersonationRequests: the headers as a list of requests, in upstream's order. */
export function buildImpersonationRequests(req: IncomingMessage): ImpersonationRequest[] {
  const headers = req.headersDistinct;
  const requests: ImpersonationRequest[] = [];
  // Go's Header.Get: the first value. Node has already lower-cased every header name.
  const user = headers[ImpersonateUserHeader]?.[0] ?? "";
  if (user) {
    const sa = splitUsername(user);
    requests.push(
      sa ? { kind: "ServiceAccount", namespace: sa[0], name: sa[1] } : { kind: "User", name: user },
    );
  }
  // Each Impersonate-Group header is one group; a comma inside a value is part of the name.
  const groups = headers[ImpersonateGroupHeader] ?? [];
  for (const group of groups) requests.push({ kind: "Group", name: group });

  const extraHeaders = Object.keys(headers)
    .filter((h) => h.startsWith(ImpersonateUserExtraHeaderPrefix))
    .sort();
  for (const header of extraHeaders) {
    const extraKey = unescapeExtraKey(header.slice(ImpersonateUserExtraHeaderPrefix.length));
    for (const value of headers[header] ?? []) requests.push({ kind: "UserExtra", name: value, extraKey });
  }

  const uid = headers[ImpersonateUIDHeader]?.[0] ?? "";
  if (uid) requests.push({ kind: "UID", name: uid });

  if ((groups.length > 0 || extraHeaders.length > 0 || uid) && !user) {
    const what = requests.map((r) => `${r.kind} ${JSON.stringify(r.name)}`).join(", ");
    throw newBadRequest(`requested [${what}] without impersonating a user`);
  }
  return requests;
}

/** Extra keys travel %-encoded in header names (`Impersonate-Extra-example.com%2fscopes`). */
function unescapeExtraKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded; // malformed: kept as written, as upstream does
  }
}
// #endregion impersonation-requests

// #region attributes
/** The `impersonate` check for one request: which resource stands for the thing impersonated. */
export function impersonationAttributes(requestor: UserInfo, r: ImpersonationRequest): Attributes {
  const base = {
    user: requestor,
    verb: "impersonate",
    isResourceRequest: true,
    path: "",
    namespace: "",
    apiGroup: "",
    apiVersion: "",
    subresource: "",
    name: r.name,
  };
  switch (r.kind) {
    case "ServiceAccount":
      return { ...base, apiVersion: "v1", namespace: r.namespace ?? "", resource: "serviceaccounts" };
    case "User":
      return { ...base, resource: "users" };
    case "Group":
      return { ...base, resource: "groups" };
    case "UserExtra":
      return {
        ...base,
        apiGroup: "authentication.k8s.io",
        apiVersion: "v1",
        resource: "userextras",
        subresource: r.extraKey ?? "",
      };
    case "UID":
      return { ...base, apiGroup: "authentication.k8s.io", apiVersion: "v1", resource: "uids" };
  }
}
// #endregion attributes

// #region with-impersonation
/** The user the rest of the request runs as: the requestor, or whom they may impersonate. */
/** Some header's name starts with `impersonate-` (every header this filter reads does). */
function hasImpersonationHeader(req: IncomingMessage): boolean {
  // Node has lower-cased the names; the handlers read req.headers anyway, so it exists already.
  for (const name in req.headers) if (name.startsWith("impersonate-")) return true;
  return false;
}

export async function impersonateRequest(
  req: IncomingMessage,
  requestor: UserInfo,
  authorizer: Authorizer | undefined,
): Promise<UserInfo> {
  // Most requests impersonate no one: the header names say so without building Node's
  // headersDistinct (an array per header) — chapter 5's bind benchmark, 1 % of the server's CPU.
  if (!hasImpersonationHeader(req)) return requestor;
  const requests = buildImpersonationRequests(req);
  if (requests.length === 0) return requestor;

  // Groups given are the authority; none given for a service account means its fixed groups.
  const groupsSpecified = (req.headersDistinct[ImpersonateGroupHeader] ?? []).length > 0;
  let name = "";
  let uid = "";
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    const attributes = impersonationAttributes(requestor, r);
    // No authorizer is upstream's AlwaysAllow.
    const { decision, reason } = authorizer
      ? await authorizer.authorize(attributes)
      : { decision: "allow", reason: "" };
    if (decision !== "allow") throw forbiddenStatusError(attributes, reason);
    switch (r.kind) {
      case "ServiceAccount":
        name = makeUsername(r.namespace ?? "", r.name);
        if (!groupsSpecified) groups = makeGroupNames(r.namespace ?? "");
        break;
      case "User":
        name = r.name;
        break;
      case "Group":
        groups.push(r.name);
        break;
      case "UserExtra":
        extra[r.extraKey ?? ""] = [...(extra[r.extraKey ?? ""] ?? []), r.name];
        break;
      case "UID":
        uid = r.name;
        break;
    }
  }

  if (name !== Anonymous) {
    if (!groups.includes(AllAuthenticated) && !groups.includes(AllUnauthenticated))
      groups.push(AllAuthenticated);
  } else if (!groups.includes(AllUnauthenticated)) {
    groups.push(AllUnauthenticated);
  }

  for (const header of Object.keys(req.headers)) {
    const known = [ImpersonateUserHeader, ImpersonateGroupHeader, ImpersonateUIDHeader].includes(header);
    if (known || header.startsWith(ImpersonateUserExtraHeaderPrefix)) delete req.headers[header];
  }
  const user: UserInfo = { name, groups, extra };
  if (uid) user.uid = uid;
  return user;
}
// #endregion with-impersonation
