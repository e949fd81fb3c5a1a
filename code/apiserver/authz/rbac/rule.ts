/**
 * Rule matching — does one PolicyRule allow one request? Upstream: RuleAllows in
 * plugin/pkg/auth/authorizer/rbac/rbac.go, over the matchers of
 * pkg/apis/rbac/v1/evaluation_helpers.go.
 *
 * Solves: the whole of RBAC's judgement is this one test, run against the rules of the
 * bindings that name the user; everything else (which bindings, which roles) only chooses
 * the rules to test.
 *
 * Invariants:
 * - a resource request matches when the verb, the API group, the resource (with its
 *   subresource, `pods/log`) and the name all match; a non-resource request when the verb and
 *   the path match — a rule never mixes the two;
 * - `*` matches any verb, group, resource or URL; `pods` does not match `pods/log` (a
 *   subresource is its own permission); `*` + `/scale` matches every resource's scale;
 * - an empty resourceNames means every name; a request without a name (list, create) is
 *   matched only by such a rule;
 * - a URL rule ending in `*` matches every path that starts with what comes before the `*`.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go (RuleAllows)
 * @upstream kubernetes/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go (VerbMatches, APIGroupMatches, ResourceMatches, ResourceNameMatches, NonResourceURLMatches)
 * @chapter 03-api-security
 */
import { APIGroupAll, NonResourceAll, type PolicyRule, ResourceAll, VerbAll } from "../../../api/rbac.ts";
import type { Attributes } from "../authorizer.ts";

// #region matchers
export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return (rule.verbs ?? []).some((v) => v === VerbAll || v === verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  return (rule.apiGroups ?? []).some((g) => g === APIGroupAll || g === group);
}

/** `combined` is `pods` or `pods/log`; `subresource` is "" or `log`. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === ResourceAll || r === combined) return true;
    // `*/log`: the subresource of any resource — but only when the request has one.
    if (subresource && r === `*/${subresource}`) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === NonResourceAll || u === path) return true;
    if (u.endsWith("*") && path.startsWith(u.replace(/\*+$/, ""))) return true;
  }
  return false;
}
// #endregion matchers

// #region rule-allows
/** RuleAllows: the one test RBAC runs, rule by rule, until one says yes. */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (a.isResourceRequest) {
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return (
      verbMatches(rule, a.verb) &&
      apiGroupMatches(rule, a.apiGroup) &&
      resourceMatches(rule, combined, a.subresource) &&
      resourceNameMatches(rule, a.name)
    );
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
}
// #endregion rule-allows
