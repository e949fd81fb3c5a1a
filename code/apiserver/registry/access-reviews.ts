/**
 * The access reviews — "may this user do this?" (SubjectAccessReview), "…in this namespace?"
 * (LocalSubjectAccessReview), "may I?" (SelfSubjectAccessReview, `kubectl auth can-i`) and
 * "what may I do here?" (SelfSubjectRulesReview, `kubectl auth can-i --list`). Nothing is
 * stored; each answer is computed by the same authorizer that judges real requests.
 * Upstream: the REST of pkg/registry/authorization/{subjectaccessreview,
 * localsubjectaccessreview,selfsubjectaccessreview,selfsubjectrulesreview}/rest.go.
 *
 * Solves:
 * - a client learns what it may do before trying (kubectl hides a menu item, a controller
 *   checks a user's rights before acting for them);
 * - the answer cannot drift from the real decision: it *is* the real decision, made on the
 *   review's attributes instead of a request's.
 *
 * Invariants:
 * - exactly one of resourceAttributes and nonResourceAttributes; a SubjectAccessReview names a
 *   user or a group; a LocalSubjectAccessReview only asks about its own namespace;
 * - an empty version in resourceAttributes means every version (`*`);
 * - `allowed` is decision allow, `denied` decision deny, `reason` the authorizer's reason;
 * - a rules review needs a namespace, and lists rules from every authorizer (a union).
 *
 * @upstream kubernetes/kubernetes pkg/registry/authorization/subjectaccessreview/rest.go (REST.Create)
 * @upstream kubernetes/kubernetes pkg/registry/authorization/localsubjectaccessreview/rest.go (REST.Create)
 * @upstream kubernetes/kubernetes pkg/registry/authorization/selfsubjectaccessreview/rest.go (REST.Create)
 * @upstream kubernetes/kubernetes pkg/registry/authorization/selfsubjectrulesreview/rest.go (REST.Create)
 * @upstream kubernetes/kubernetes pkg/registry/authorization/util/helpers.go (ResourceAttributesFrom, AuthorizationAttributesFrom)
 * @upstream kubernetes/kubernetes pkg/apis/authorization/validation/validation.go (ValidateSubjectAccessReviewSpec, ValidateSelfSubjectAccessReviewSpec, ValidateLocalSubjectAccessReview)
 * @chapter 03-api-security
 */
import { type FieldError, invalid } from "../../api/field-errors.ts";
import type { KubeObject } from "../../api/meta.ts";
import type { UserInfo } from "../authn/user.ts";
import type { Attributes, Authorizer, RuleResolver } from "../authz/authorizer.ts";
import { newBadRequest, newInvalid } from "../errors.ts";

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}
interface NonResourceAttributes {
  path?: string;
  verb?: string;
}
interface ReviewSpec {
  resourceAttributes?: ResourceAttributes | null;
  nonResourceAttributes?: NonResourceAttributes | null;
  user?: string;
  groups?: string[];
  uid?: string;
}

export interface ReviewDeps {
  authorizer: Authorizer;
  ruleResolver: RuleResolver;
}

// #region attributes-from-spec
/** AuthorizationAttributesFrom: the review's question in the authorizer's words. */
export function attributesFromSpec(user: UserInfo, spec: ReviewSpec): Attributes {
  const r = spec.resourceAttributes;
  if (r) {
    return {
      user,
      verb: r.verb ?? "",
      isResourceRequest: true,
      path: "",
      namespace: r.namespace ?? "",
      apiGroup: r.group ?? "",
      apiVersion: r.version || "*",
      resource: r.resource ?? "",
      subresource: r.subresource ?? "",
      name: r.name ?? "",
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return {
    user,
    verb: n.verb ?? "",
    isResourceRequest: false,
    path: n.path ?? "",
    namespace: "",
    apiGroup: "",
    apiVersion: "",
    resource: "",
    subresource: "",
    name: "",
  };
}
// #endregion attributes-from-spec

// #region validate
function validateAttributes(spec: ReviewSpec): FieldError[] {
  if (spec.resourceAttributes && spec.nonResourceAttributes) {
    return [
      invalid(
        "spec.nonResourceAttributes",
        spec.nonResourceAttributes,
        "cannot be specified in combination with resourceAttributes",
      ),
    ];
  }
  if (!spec.resourceAttributes && !spec.nonResourceAttributes) {
    return [
      invalid(
        "spec.resourceAttributes",
        null,
        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
      ),
    ];
  }
  return [];
}
// #endregion validate

const specOf = (review: KubeObject): ReviewSpec => (review.spec ?? {}) as ReviewSpec;

async function answer(review: KubeObject, user: UserInfo, deps: ReviewDeps): Promise<KubeObject> {
  const { decision, reason } = await deps.authorizer.authorize(attributesFromSpec(user, specOf(review)));
  const status: Record<string, unknown> = { allowed: decision === "allow" };
  if (decision === "deny") status.denied = true;
  if (reason) status.reason = reason;
  return { ...review, status };
}

// #region reviews
/** SelfSubjectAccessReview: about the requester. */
export async function createSelfSubjectAccessReview(
  review: KubeObject,
  requester: UserInfo,
  deps: ReviewDeps,
) {
  const errs = validateAttributes(specOf(review));
  if (errs.length) throw newInvalid("authorization.k8s.io", "SelfSubjectAccessReview", "", errs);
  return answer(review, requester, deps);
}

/** The user a (Local)SubjectAccessReview asks about. */
function subjectOf(spec: ReviewSpec): UserInfo {
  return { name: spec.user ?? "", uid: spec.uid, groups: spec.groups ?? [] };
}

/** SubjectAccessReview: about anyone (the caller needed `create subjectaccessreviews`). */
export async function createSubjectAccessReview(review: KubeObject, deps: ReviewDeps) {
  const spec = specOf(review);
  const errs = validateAttributes(spec);
  if (!spec.user && !(spec.groups ?? []).length) {
    errs.push(invalid("spec.user", spec.user ?? "", "at least one of user or group must be specified"));
  }
  if (errs.length) throw newInvalid("authorization.k8s.io", "SubjectAccessReview", "", errs);
  return answer(review, subjectOf(spec), deps);
}

/** LocalSubjectAccessReview: a SubjectAccessReview that may only ask about the URL's namespace. */
export async function createLocalSubjectAccessReview(
  review: KubeObject,
  namespace: string,
  deps: ReviewDeps,
) {
  const spec = specOf(review);
  const errs = validateAttributes(spec);
  if (spec.nonResourceAttributes) {
    errs.push(
      invalid("spec.nonResourceAttributes", spec.nonResourceAttributes, "disallowed on this kind of request"),
    );
  }
  if (!spec.user && !(spec.groups ?? []).length) {
    errs.push(invalid("spec.user", spec.user ?? "", "at least one of user or group must be specified"));
  }
  if (errs.length) throw newInvalid("authorization.k8s.io", "LocalSubjectAccessReview", "", errs);
  if ((spec.resourceAttributes?.namespace ?? "") !== namespace) {
    throw newBadRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  }
  return answer(review, subjectOf(spec), deps);
}

/** SelfSubjectRulesReview: every rule the requester holds in a namespace. */
export async function createSelfSubjectRulesReview(
  review: KubeObject,
  requester: UserInfo,
  deps: ReviewDeps,
) {
  const namespace = (review.spec as { namespace?: string } | undefined)?.namespace ?? "";
  if (!namespace) throw newBadRequest("no namespace on request");
  const r = await deps.ruleResolver.rulesFor(requester, namespace);
  const status: Record<string, unknown> = {
    resourceRules: r.resourceRules,
    nonResourceRules: r.nonResourceRules,
    incomplete: r.incomplete,
  };
  if (r.evaluationError) status.evaluationError = r.evaluationError;
  // Upstream answers with a fresh review: the status only, the spec left empty.
  return {
    apiVersion: review.apiVersion,
    kind: review.kind,
    metadata: { creationTimestamp: null },
    spec: {},
    status,
  };
}
// #endregion reviews
