/**
 * selfsubjectaccessreviews — "may I?", asked by `kubectl auth can-i`: the review comes back with
 * `status.allowed`. Nothing is stored; the answer is computed per request. Upstream: the REST of
 * kubernetes pkg/registry/authorization/selfsubjectaccessreview/rest.go.
 *
 * Solves: a client can learn what it may do before trying it, and gets the answer from the same
 * authorizer that will judge the real request.
 *
 * Invariants: until authorization exists (chapter 3) everyone may do everything, as upstream's
 * AlwaysAllow authorizer answers; the answer is the review as sent, with its status set.
 *
 * @upstream kubernetes/kubernetes pkg/registry/authorization/selfsubjectaccessreview/rest.go (REST.Create)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";

// #region self-subject-access-review
/** REST.Create: the review, answered (AlwaysAllow: yes). */
export function createSelfSubjectAccessReview(review: KubeObject): KubeObject {
  return { ...review, status: { allowed: true } };
}
// #endregion self-subject-access-review
