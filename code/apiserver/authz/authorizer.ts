/**
 * Authorizer — "may this user do this?", asked once per request in the API's words (verb,
 * resource, namespace, name), never in URLs. Upstream: k8s.io/apiserver
 * pkg/authorization/authorizer/interfaces.go.
 *
 * Solves: several authorizers (Node, RBAC, …) judge in the order `--authorization-mode` gives;
 * each says allow, deny or "no opinion", and the first that is not "no opinion" decides.
 *
 * Invariants:
 * - a resource request has a verb, apiGroup, resource and maybe namespace, subresource, name;
 *   a non-resource request (`/healthz`, `/version`, `/apis`) has only a verb (the lower-case HTTP
 *   method) and a path;
 * - `noOpinion` from every authorizer means the request is forbidden (403);
 * - `reason` is for logs and audit (`RBAC: allowed by ClusterRoleBinding "…"`), not for the client.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authorization/authorizer/interfaces.go (Attributes, Authorizer, RuleResolver, Decision)
 * @chapter 03-api-security
 */
import type { UserInfo } from "../authn/user.ts";

// #region attributes
export interface Attributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  /** Non-resource requests: the URL path. */
  path: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
  /**
   * The raw `fieldSelector` of a list, watch or deletecollection (v1.32's AuthorizeWithSelectors,
   * on by default): the Node authorizer lets a kubelet list the pods of `spec.nodeName=<itself>`.
   */
  fieldSelector?: string;
  /** The raw `labelSelector`, likewise. */
  labelSelector?: string;
}

export type Decision = "allow" | "deny" | "noOpinion";

export interface AuthorizerResult {
  decision: Decision;
  reason: string;
}

export interface Authorizer {
  authorize(a: Attributes): Promise<AuthorizerResult>;
}
// #endregion attributes

// #region rule-resolver
/** A rule as SelfSubjectRulesReview reports it (`kubectl auth can-i --list`). */
export interface ResourceRuleInfo {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames: string[];
}

export interface NonResourceRuleInfo {
  verbs: string[];
  nonResourceURLs: string[];
}

/** What a user may do in a namespace: the rules, and whether the list may be incomplete. */
export interface RuleResolver {
  rulesFor(
    user: UserInfo,
    namespace: string,
  ): Promise<{
    resourceRules: ResourceRuleInfo[];
    nonResourceRules: NonResourceRuleInfo[];
    incomplete: boolean;
    evaluationError?: string;
  }>;
}
// #endregion rule-resolver
