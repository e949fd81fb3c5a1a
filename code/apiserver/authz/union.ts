/**
 * The simple authorizers and their union — AlwaysAllow, AlwaysDeny, the `system:masters`
 * group, and the chain that asks each in turn. Upstream: k8s.io/apiserver
 * pkg/authorization/authorizerfactory/builtin.go and pkg/authorization/union/union.go.
 *
 * Solves: `--authorization-mode=Node,RBAC` means "the Node authorizer first; if it has no
 * opinion, RBAC": the union walks the list and the first decision that is not `noOpinion`
 * wins; when all abstain the request is forbidden (filters/authorization.ts).
 *
 * Invariants:
 * - the union's reasons for abstaining are joined with "\n", as upstream's;
 * - the union's rules (SelfSubjectRulesReview) are every member's rules, concatenated;
 *   incomplete when any member's are;
 * - members of `system:masters` are allowed before any mode is asked (upstream puts this
 *   authorizer first, so a broken RBAC policy cannot lock the admin out).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authorization/union/union.go (unionAuthzHandler.Authorize, unionAuthzRulesHandler.RulesFor)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authorization/authorizerfactory/builtin.go (alwaysAllowAuthorizer, alwaysDenyAuthorizer, privilegedGroupAuthorizer)
 * @chapter 03-api-security
 */
import { SystemPrivilegedGroup, type UserInfo } from "../authn/user.ts";
import type { Attributes, Authorizer, AuthorizerResult, RuleResolver } from "./authorizer.ts";

export type Rules = Awaited<ReturnType<RuleResolver["rulesFor"]>>;

// #region builtin
export const alwaysAllow: Authorizer & RuleResolver = {
  authorize: async () => ({ decision: "allow", reason: "" }),
  rulesFor: async () => ({
    resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"], resourceNames: [] }],
    nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
    incomplete: false,
  }),
};

/** Upstream's AlwaysDeny abstains (with a reason) rather than denying, so a later mode may still allow. */
export const alwaysDeny: Authorizer & RuleResolver = {
  authorize: async () => ({ decision: "noOpinion", reason: "Everything is forbidden." }),
  rulesFor: async () => ({ resourceRules: [], nonResourceRules: [], incomplete: false }),
};

/** NewPrivilegedGroups: allow members of these groups, abstain for everyone else. */
export function privilegedGroups(...groups: string[]): Authorizer {
  return {
    authorize: async (a) => ({
      decision: a.user.groups.some((g) => groups.includes(g)) ? "allow" : "noOpinion",
      reason: "",
    }),
  };
}

export const systemMastersAuthorizer = privilegedGroups(SystemPrivilegedGroup);
// #endregion builtin

// #region union
export function unionAuthorizer(members: readonly Authorizer[]): Authorizer {
  return {
    async authorize(a: Attributes): Promise<AuthorizerResult> {
      const reasons: string[] = [];
      for (const m of members) {
        const result = await m.authorize(a);
        if (result.decision !== "noOpinion") return result;
        if (result.reason) reasons.push(result.reason);
      }
      return { decision: "noOpinion", reason: reasons.join("\n") };
    },
  };
}

export function unionRuleResolver(members: readonly RuleResolver[]): RuleResolver {
  return {
    async rulesFor(user: UserInfo, namespace: string): Promise<Rules> {
      const out: Rules = { resourceRules: [], nonResourceRules: [], incomplete: false };
      const errors: string[] = [];
      for (const m of members) {
        const r = await m.rulesFor(user, namespace);
        out.resourceRules.push(...r.resourceRules);
        out.nonResourceRules.push(...r.nonResourceRules);
        out.incomplete ||= r.incomplete;
        if (r.evaluationError) errors.push(r.evaluationError);
      }
      if (errors.length) out.evaluationError = errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
      return out;
    },
  };
}
// #endregion union
