// The reference answer, in the matchers README.md's rules are made of. The course's own RBAC
// authorizer decides the same in code/apiserver/authz/rbac/rule.ts (region rule-allows), for every
// request a cluster with `--authorization-mode=RBAC` serves.
//
// A recorded mistake next to this file (wrong-*.ts) is this answer with one matcher done wrong: it
// builds its ruleAllows with `ruleAllowsWith({ ...reference, <matcher> })`.
import type { PolicyRule } from "../../../code/api/rbac.ts";
import type { Attributes } from "../../../code/apiserver/authz/authorizer.ts";

export interface Matchers {
  verb(rule: PolicyRule, verb: string): boolean;
  group(rule: PolicyRule, group: string): boolean;
  /** `combined` is `pods` or `pods/log`; `subresource` is "" or `log`. */
  resource(rule: PolicyRule, combined: string, subresource: string): boolean;
  name(rule: PolicyRule, name: string): boolean;
  url(rule: PolicyRule, path: string): boolean;
}

export const reference: Matchers = {
  verb: (rule, verb) => (rule.verbs ?? []).some((v) => v === "*" || v === verb),
  group: (rule, group) => (rule.apiGroups ?? []).some((g) => g === "*" || g === group),
  resource: (rule, combined, subresource) =>
    (rule.resources ?? []).some(
      (r) => r === "*" || r === combined || (subresource !== "" && r === `*/${subresource}`),
    ),
  name: (rule, name) => (rule.resourceNames ?? []).length === 0 || (rule.resourceNames ?? []).includes(name),
  url: (rule, path) =>
    (rule.nonResourceURLs ?? []).some(
      (u) => u === "*" || u === path || (u.endsWith("*") && path.startsWith(u.slice(0, -1))),
    ),
};

/** The exercise's function, made of `m`. */
export function ruleAllowsWith(m: Matchers) {
  return function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
    if (!a.isResourceRequest) return m.verb(rule, a.verb) && m.url(rule, a.path);
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return (
      m.verb(rule, a.verb) &&
      m.group(rule, a.apiGroup) &&
      m.resource(rule, combined, a.subresource) &&
      m.name(rule, a.name)
    );
  };
}

export const ruleAllows = ruleAllowsWith(reference);
