/**
 * Service-account users — how a ServiceAccount `web` in namespace `shop` appears to everything
 * after authentication: the user `system:serviceaccount:shop:web`, in the groups
 * `system:serviceaccounts` and `system:serviceaccounts:shop`. Upstream: k8s.io/apiserver
 * pkg/authentication/serviceaccount/util.go.
 *
 * Solves:
 * - RBAC binds a service account by that user name, or all of a namespace's by the group, so the
 *   token authenticator and impersonation (`kubectl --as=system:serviceaccount:shop:web`) must
 *   spell the names the same way;
 * - a pod-bound token tells who is calling *from where*: the pod (and its node) ride in the
 *   user's extra, so the Node authorizer and audit can see them; the token's `jti` rides as the
 *   credential id, so an audit line can be traced back to the one token that made it.
 *
 * Invariants:
 * - `splitUsername(makeUsername(ns, name))` gives back `[ns, name]` for every valid ns and name;
 *   anything else (a user called `system:serviceaccount:a:b:c`) is not a service account;
 * - pod name and uid are in extra together or not at all; node uid only with a node name.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/serviceaccount/util.go (MakeUsername, SplitUsername, MakeGroupNames, ServiceAccountInfo.UserInfo)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/token/jwt/jwt.go (CredentialIDForJTI)
 * @chapter 03-api-security
 */
import type { UserInfo } from "../user.ts";

export const ServiceAccountUsernamePrefix = "system:serviceaccount:";
export const ServiceAccountGroupPrefix = "system:serviceaccounts:";
export const AllServiceAccountsGroup = "system:serviceaccounts";

/** The extra keys a service-account token adds to its user (util.go, user.go). */
export const PodNameKey = "authentication.kubernetes.io/pod-name";
export const PodUIDKey = "authentication.kubernetes.io/pod-uid";
export const NodeNameKey = "authentication.kubernetes.io/node-name";
export const NodeUIDKey = "authentication.kubernetes.io/node-uid";
export const CredentialIDKey = "authentication.kubernetes.io/credential-id";

// #region names
export function makeUsername(namespace: string, name: string): string {
  return `${ServiceAccountUsernamePrefix}${namespace}:${name}`;
}

/** The groups every service account of the namespace is in: a fixed mapping, no lookup. */
export function makeGroupNames(namespace: string): string[] {
  return [AllServiceAccountsGroup, `${ServiceAccountGroupPrefix}${namespace}`];
}

/** Namespace and name from a service-account user name, or undefined if it is not one. */
export function splitUsername(username: string): [string, string] | undefined {
  if (!username.startsWith(ServiceAccountUsernamePrefix)) return undefined;
  const parts = username.slice(ServiceAccountUsernamePrefix.length).split(":");
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts;
  // ValidateNamespaceName is a DNS label; ValidateServiceAccountName a DNS subdomain.
  const label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
  const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  if (namespace.length > 63 || !label.test(namespace)) return undefined;
  if (name.length > 253 || !subdomain.test(name)) return undefined;
  return [namespace, name];
}
// #endregion names

// #region service-account-info
/** What a validated token says about its holder (upstream's ServiceAccountInfo). */
export interface ServiceAccountInfo {
  namespace: string;
  name: string;
  uid: string;
  podName?: string;
  podUID?: string;
  nodeName?: string;
  nodeUID?: string;
  /** `JTI=<the token's jti>`: which token this was, for audit. */
  credentialID?: string;
}

export function serviceAccountUserInfo(sa: ServiceAccountInfo): UserInfo {
  const extra: Record<string, string[]> = {};
  if (sa.podName && sa.podUID) {
    extra[PodNameKey] = [sa.podName];
    extra[PodUIDKey] = [sa.podUID];
  }
  if (sa.credentialID) extra[CredentialIDKey] = [sa.credentialID];
  if (sa.nodeName) {
    extra[NodeNameKey] = [sa.nodeName];
    if (sa.nodeUID) extra[NodeUIDKey] = [sa.nodeUID];
  }
  const user: UserInfo = {
    name: makeUsername(sa.namespace, sa.name),
    uid: sa.uid,
    groups: makeGroupNames(sa.namespace),
  };
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}

export function credentialIDForJTI(jti: string | undefined): string | undefined {
  return jti ? `JTI=${jti}` : undefined;
}
// #endregion service-account-info
