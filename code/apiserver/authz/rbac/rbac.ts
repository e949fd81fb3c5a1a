/**
 * The RBAC authorizer — allow when some rule the user holds allows the request; otherwise
 * no opinion (RBAC never denies, so a later authorizer may still allow). Upstream:
 * plugin/pkg/auth/authorizer/rbac/rbac.go.
 *
 * Solves: the decision `--authorization-mode=RBAC` makes for every request, and the rule list
 * SelfSubjectRulesReview reports (`kubectl auth can-i --list`), from the same resolver.
 *
 * Invariants:
 * - allowed: the reason names the binding, the role and the subject
 *   (`RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`);
 * - not allowed: no opinion, with a reason only when a binding pointed at a missing role;
 * - rulesFor splits each rule into a resource rule (when it has resources) and a non-resource
 *   rule (when it has URLs), and is never "incomplete" — errors go into evaluationError.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go (RBACAuthorizer.Authorize, authorizingVisitor, RulesFor)
 * @chapter 03-api-security
 */
import type { UserInfo } from "../../authn/user.ts";
import type {
  Attributes,
  Authorizer,
  AuthorizerResult,
  NonResourceRuleInfo,
  ResourceRuleInfo,
  RuleResolver,
} from "../authorizer.ts";
import type { RBACIndex } from "./index.ts";
import { ruleAllows } from "./rule.ts";
import { aggregate, DefaultRuleResolver } from "./rule-resolver.ts";

// #region authorize
export class RBACAuthorizer implements Authorizer, RuleResolver {
  readonly resolver: DefaultRuleResolver;

  constructor(index: RBACIndex) {
    this.resolver = new DefaultRuleResolver(index);
  }

  async authorize(a: Attributes): Promise<AuthorizerResult> {
    let allowedBy: string | undefined;
    const errors: string[] = [];
    this.resolver.visitRulesFor(a.user, a.namespace, (source, rule, err) => {
      if (rule && ruleAllows(a, rule)) {
        allowedBy = source;
        return false; // the first allowing rule decides; stop walking
      }
      if (err) errors.push(err);
      return true;
    });
    if (allowedBy) return { decision: "allow", reason: `RBAC: allowed by ${allowedBy}` };
    return { decision: "noOpinion", reason: errors.length ? `RBAC: ${aggregate(errors)}` : "" };
  }
  // #endregion authorize

  // #region rules-for
  async rulesFor(user: UserInfo, namespace: string) {
    const { rules, errors } = this.resolver.rulesFor(user, namespace);
    const resourceRules: ResourceRuleInfo[] = [];
    const nonResourceRules: NonResourceRuleInfo[] = [];
    for (const r of rules) {
      if (r.resources?.length) {
        resourceRules.push({
          verbs: r.verbs ?? [],
          apiGroups: r.apiGroups ?? [],
          resources: r.resources,
          resourceNames: r.resourceNames ?? [],
        });
      }
      if (r.nonResourceURLs?.length)
        nonResourceRules.push({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs });
    }
    return {
      resourceRules,
      nonResourceRules,
      incomplete: false,
      evaluationError: errors.length ? aggregate(errors) : undefined,
    };
  }
  // #endregion rules-for
}
