/**
 * Exercise: RBAC rule matching — does one PolicyRule allow one request?
 *
 * A resource request matches on verb, API group, resource (with its subresource: `pods/log`)
 * and name; a non-resource request on verb and URL path (a trailing `*` is a prefix). `*`
 * matches anything in its place. README.md has the rules.
 */
import type { PolicyRule } from "../../../code/api/rbac.ts";
import type { Attributes } from "../../../code/apiserver/authz/authorizer.ts";

/** True when `rule` allows the request `a`. */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  throw new Error(
    `TODO: ruleAllows — does a rule with verbs ${JSON.stringify(rule.verbs)} allow ${a.verb} ${a.isResourceRequest ? a.resource : a.path}?`,
  );
}
