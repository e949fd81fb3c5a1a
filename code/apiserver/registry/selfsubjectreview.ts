/**
 * selfsubjectreviews — "who am I?", asked by `kubectl auth whoami`: the review comes back with
 * the user the request was authenticated as. Nothing is stored. Upstream: the REST of kubernetes
 * pkg/registry/authentication/selfsubjectreview/rest.go.
 *
 * Solves: with several authenticators, impersonation and proxies in front of the server, the
 * only reliable answer to "which user and groups does the server see for my kubeconfig?" is
 * the server's own — the same UserInfo the authorizer will judge.
 *
 * Invariants: the answer ignores what the client sent (a review has no spec); the user is exactly
 * as the authentication filter left it (groups with `system:authenticated`); empty fields are left
 * out, as Go's `omitempty` on UserInfo's fields does.
 *
 * @upstream kubernetes/kubernetes pkg/registry/authentication/selfsubjectreview/rest.go (REST.Create)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../api/meta.ts";
import type { UserInfo } from "../authn/user.ts";

// #region self-subject-review
/** REST.Create: a new review, created now, whose status is the requesting user. */
export function createSelfSubjectReview(user: UserInfo, now = new Date()): KubeObject {
  return {
    kind: "SelfSubjectReview",
    apiVersion: "authentication.k8s.io/v1",
    metadata: { creationTimestamp: now.toISOString().replace(/\.\d+Z$/, "Z") },
    status: {
      userInfo: {
        username: user.name,
        ...(user.uid ? { uid: user.uid } : {}),
        ...(user.groups.length > 0 ? { groups: [...user.groups] } : {}),
        ...(user.extra && Object.keys(user.extra).length > 0 ? { extra: { ...user.extra } } : {}),
      },
    },
  };
}
// #endregion self-subject-review
