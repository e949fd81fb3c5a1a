/**
 * Webhook rules — does one rule of a webhook cover this request? Scope, operation, API group,
 * version and resource (with its subresource) must all match. Upstream: k8s.io/apiserver
 * pkg/admission/plugin/webhook/predicates/rules/rules.go (Matcher).
 *
 * Solves: a webhook asks only for what it needs (`CREATE pods`, `UPDATE deployments/scale`);
 * every other request never leaves the API server, so one slow webhook cannot slow the cluster.
 *
 * Invariants:
 * - `*` in operations, groups and versions matches anything; in resources `*` matches every
 *   resource but no subresource, `*\/*` everything, `pods/*` pods and every subresource of
 *   pods (the `*` matches the empty subresource too), `*\/status` the status of anything;
 * - a Namespace is cluster-scoped for `scope`, though its requests carry its own name as namespace;
 * - the webhook configurations themselves are exempt from webhooks, so a broken webhook can
 *   always be removed.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules/rules.go (Matcher.Matches, IsExemptAdmissionConfigurationResource)
 * @chapter 03-api-security
 */
import type { RuleWithOperations } from "../../../api/admissionregistration.ts";
import type { Attributes } from "../interfaces.ts";

/** The parts of a request a rule looks at; `resource` may be an equivalent one (matchPolicy). */
export type RuleAttributes = Pick<Attributes, "operation" | "namespace" | "subresource"> & {
  resource: Attributes["resource"];
};

const exactOrWildcard = (items: readonly string[] | undefined, requested: string) =>
  (items ?? []).some((item) => item === "*" || item === requested);

function isNamespaceResource(r: RuleAttributes["resource"]): boolean {
  return r.group === "" && r.version === "v1" && r.resource === "namespaces";
}

// #region matches
export function ruleMatches(rule: RuleWithOperations, a: RuleAttributes): boolean {
  return (
    scopeMatches(rule, a) &&
    (rule.operations ?? []).some((op) => op === "*" || op === a.operation) &&
    exactOrWildcard(rule.apiGroups, a.resource.group) &&
    exactOrWildcard(rule.apiVersions, a.resource.version) &&
    resourceMatches(rule, a)
  );
}

function scopeMatches(rule: RuleWithOperations, a: RuleAttributes): boolean {
  switch (rule.scope ?? "*") {
    case "*":
      return true;
    case "Namespaced":
      return !isNamespaceResource(a.resource) && a.namespace !== "";
    case "Cluster":
      return isNamespaceResource(a.resource) || a.namespace === "";
    default:
      return false;
  }
}

function resourceMatches(rule: RuleWithOperations, a: RuleAttributes): boolean {
  for (const resSub of rule.resources ?? []) {
    const slash = resSub.indexOf("/");
    const res = slash < 0 ? resSub : resSub.slice(0, slash);
    const sub = slash < 0 ? "" : resSub.slice(slash + 1);
    if ((res === "*" || res === a.resource.resource) && (sub === "*" || sub === a.subresource)) return true;
  }
  return false;
}
// #endregion matches

/** IsExemptAdmissionConfigurationResource: webhooks never judge the objects that configure them. */
export function isExemptAdmissionConfigurationResource(a: Attributes): boolean {
  return (
    a.kind.group === "admissionregistration.k8s.io" &&
    [
      "ValidatingWebhookConfiguration",
      "MutatingWebhookConfiguration",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding",
      "MutatingAdmissionPolicy",
      "MutatingAdmissionPolicyBinding",
    ].includes(a.kind.kind)
  );
}
