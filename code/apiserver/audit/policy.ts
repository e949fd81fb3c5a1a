/**
 * The audit policy — which requests are recorded, and how much of each: the audit.k8s.io/v1
 * Policy that `--audit-policy-file` names, and the checker that gives a request its level.
 * Upstream: k8s.io/apiserver pkg/audit/policy/checker.go and reader.go, the types of
 * pkg/apis/audit/v1/types.go.
 *
 * Solves: an audit log of every byte of every request is too big to keep; the policy says per
 * user, verb, resource, namespace or path: nothing (None), who did what (Metadata), plus what
 * they sent (Request), plus what they got back (RequestResponse).
 *
 * Invariants:
 * - rules are tried in order and the first that matches decides; no match is None;
 * - a rule that names resources or namespaces matches resource requests only, one that names
 *   nonResourceURLs non-resource requests only; a rule naming neither matches both;
 * - omitStages of the policy and of the rule add up; the rule's omitManagedFields, when set,
 *   wins over the policy's.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/audit/policy/checker.go (policyRuleEvaluator.EvaluatePolicyRule, ruleMatches, ruleMatchesResource, pathMatches)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/audit/policy/reader.go (LoadPolicyFromBytes)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go (Policy, PolicyRule, GroupResources, Level, Stage)
 * @chapter 03-api-security
 */
import { parse } from "yaml";
import type { Attributes } from "../authz/authorizer.ts";

// #region policy-types
export type Level = "None" | "Metadata" | "Request" | "RequestResponse";
export type Stage = "RequestReceived" | "ResponseStarted" | "ResponseComplete" | "Panic";

export const levels: readonly Level[] = ["None", "Metadata", "Request", "RequestResponse"];
export const stages: readonly Stage[] = ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"];

export interface GroupResources {
  /** "" is the core group. */
  group?: string;
  /** `pods`, `pods/log`, `pods/*`, `*\/scale`, `*`; empty: every resource of the group. */
  resources?: string[];
  resourceNames?: string[];
}

export interface PolicyRule {
  level: Level;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  /** "" matches cluster-scoped resources. */
  namespaces?: string[];
  /** `/healthz*`, `/version`, `*`. */
  nonResourceURLs?: string[];
  omitStages?: Stage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  apiVersion?: string;
  kind?: string;
  rules: PolicyRule[];
  omitStages?: Stage[];
  omitManagedFields?: boolean;
}

/** What the checker decides for one request. */
export interface RequestAuditConfig {
  level: Level;
  omitStages: Stage[];
  omitManagedFields: boolean;
}
// #endregion policy-types

// #region load
/** LoadPolicyFromBytes: the YAML (or JSON) of an audit.k8s.io/v1 Policy, checked. */
export function loadPolicy(text: string, source = "policy"): Policy {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new Error(`failed decoding: ${(e as Error).message}`);
  }
  const p = (doc ?? {}) as Policy;
  if (p.kind !== "Policy" || p.apiVersion !== "audit.k8s.io/v1") {
    throw new Error(
      `failed decoding: no kind "${p.kind ?? ""}" is registered for version "${p.apiVersion ?? ""}"`,
    );
  }
  const errs: string[] = [];
  const checkStages = (path: string, list: unknown) => {
    for (const [i, s] of ((list as string[] | undefined) ?? []).entries()) {
      if (!(stages as readonly string[]).includes(s)) {
        errs.push(
          `${path}[${i}]: Invalid value: ${JSON.stringify(s)}: allowed stages are ${stages.join(",")}`,
        );
      }
    }
  };
  checkStages("omitStages", p.omitStages);
  for (const [i, r] of (p.rules ?? []).entries()) {
    if (!(levels as readonly string[]).includes(r.level)) {
      errs.push(
        `rules[${i}].level: Invalid value: ${JSON.stringify(r.level ?? "")}: allowed levels are ${levels.join(",")}`,
      );
    }
    if (
      (r.nonResourceURLs?.length ?? 0) > 0 &&
      ((r.resources?.length ?? 0) > 0 || (r.namespaces?.length ?? 0) > 0)
    ) {
      errs.push(
        `rules[${i}].nonResourceURLs: Invalid value: ${JSON.stringify(r.nonResourceURLs)}: rules cannot apply to both regular resources and non-resource URLs`,
      );
    }
    checkStages(`rules[${i}].omitStages`, r.omitStages);
  }
  if (errs.length > 0) throw new Error(`invalid audit policy: ${errs.join(", ")}`);
  if ((p.rules ?? []).length === 0) throw new Error(`loaded illegal policy with 0 rules from ${source}`);
  return p;
}
// #endregion load

// #region checker
/** EvaluatePolicyRule: the first matching rule's level and stages, or None. */
export function evaluatePolicy(policy: Policy, attrs: Attributes): RequestAuditConfig {
  for (const rule of policy.rules) {
    if (!ruleMatches(rule, attrs)) continue;
    return {
      level: rule.level,
      omitStages: [...new Set([...(policy.omitStages ?? []), ...(rule.omitStages ?? [])])],
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields ?? false,
    };
  }
  return { level: "None", omitStages: [], omitManagedFields: false };
}

export function ruleMatches(r: PolicyRule, a: Attributes): boolean {
  if (r.users?.length && !r.users.includes(a.user.name)) return false;
  if (r.userGroups?.length && !a.user.groups.some((g) => r.userGroups?.includes(g))) return false;
  if (r.verbs?.length && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces?.length || r.resources?.length) return a.isResourceRequest && ruleMatchesResource(r, a);
  if (r.nonResourceURLs?.length) {
    return !a.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(a.path, spec));
  }
  return true;
}

function ruleMatchesResource(r: PolicyRule, a: Attributes): boolean {
  // A cluster-scoped resource's namespace is "".
  if (r.namespaces?.length && !r.namespaces.includes(a.namespace)) return false;
  if (!r.resources?.length) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if ((gr.group ?? "") !== a.apiGroup) continue;
    if (!gr.resources?.length) return true;
    if (gr.resourceNames?.length && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === "*") return true;
      if (a.subresource && res.startsWith("*/") && res.slice(2) === a.subresource) return true;
      if (res.endsWith("/*") && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

/** `*` anything; `/healthz*` a prefix; otherwise the exact path. */
export function pathMatches(path: string, spec: string): boolean {
  if (spec === "*" || spec === path) return true;
  return spec.endsWith("*") && path.startsWith(spec.slice(0, -1));
}
// #endregion checker
