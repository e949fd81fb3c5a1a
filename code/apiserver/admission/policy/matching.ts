/**
 * Policy matching — does a policy's matchConstraints (or a binding's matchResources) cover this
 * request? The same namespace selector, object selector and rule matcher as the webhooks
 * (webhook/matchers.ts, webhook/rules.ts), plus what only policies have: excludeResourceRules,
 * resourceNames, and "no resourceRules" meaning everything (for a binding). Upstream: k8s.io/apiserver
 * pkg/admission/plugin/policy/matching/matching.go (Matcher.Matches, matchesResourceRules).
 *
 * Solves:
 * - a binding narrows its policy (`matchResources` with only a namespaceSelector: the policy's
 *   resources, in those namespaces); both must match for the binding to judge;
 * - exclusions win: `excludeResourceRules` are tried before the rules that include;
 * - the order of the cheap tests is the webhooks': a selector error (a namespace that does not
 *   exist) is reported only when the rules would have matched.
 *
 * Invariants:
 * - a rule with resourceNames matches only those names (a create with generateName has no name
 *   yet, so it matches no named rule — upstream's open TODO);
 * - with matchPolicy Equivalent, a rule may match an equivalent resource of another version;
 *   the result names the resource and kind that matched (the request's own when it matched
 *   directly) — here no resource is served at two versions, so it is always the request's.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/matching/matching.go (Matcher.Matches, matchesResourceRules)
 * @chapter 03-api-security
 */
import type { MatchResources, NamedRuleWithOperations } from "../../../api/validatingadmissionpolicy.ts";
import type { Attributes } from "../interfaces.ts";
import { equivalentResourcesFor } from "../webhook/generic.ts";
import { matchSelectors, type NamespaceGetter } from "../webhook/matchers.ts";
import { ruleMatches } from "../webhook/rules.ts";

export interface MatchResult {
  resource: Attributes["resource"];
  kind: Attributes["kind"];
}

// #region resource-rules
function nameMatches(rule: NamedRuleWithOperations, a: Attributes): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name);
}

/** The resource and kind a rule list matched, or undefined. */
export function matchesResourceRules(
  rules: readonly NamedRuleWithOperations[],
  matchPolicy: string | undefined,
  a: Attributes,
): MatchResult | undefined {
  for (const rule of rules) {
    if (ruleMatches(rule, a) && nameMatches(rule, a)) return { resource: a.resource, kind: a.kind };
  }
  if (matchPolicy !== "Equivalent") return undefined;
  for (const rule of rules) {
    for (const eq of equivalentResourcesFor(a.resource)) {
      const resource = { group: eq.group, version: eq.version, resource: eq.resource };
      if (ruleMatches(rule, { ...a, resource }) && nameMatches(rule, a)) {
        return { resource, kind: { group: eq.group, version: eq.version, kind: eq.kind } };
      }
    }
  }
  return undefined;
}
// #endregion resource-rules

// #region matches
/** Matcher.Matches: the matched resource and kind, undefined when the constraints do not cover `a`. */
export async function matches(
  m: MatchResources,
  a: Attributes,
  getNamespace: NamespaceGetter,
): Promise<MatchResult | undefined> {
  const selectors = await matchSelectors(m.namespaceSelector, m.objectSelector, a, getNamespace);
  if (!selectors.matched) return undefined;

  if (matchesResourceRules(m.excludeResourceRules ?? [], m.matchPolicy, a)) return undefined;
  const rules = m.resourceRules ?? [];
  const result =
    rules.length === 0
      ? { resource: a.resource, kind: a.kind }
      : matchesResourceRules(rules, m.matchPolicy, a);
  if (!result) return undefined;
  if (selectors.err !== undefined) throw selectors.err;
  return result;
}
// #endregion matches
