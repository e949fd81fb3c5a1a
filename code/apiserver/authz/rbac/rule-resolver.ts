/**
 * The rule resolver — every rule a user holds in a namespace, with where it came from.
 * Upstream: DefaultRuleResolver in pkg/registry/rbac/validation/rule.go.
 *
 * Solves: three questions share one walk — "is this request allowed?" (the authorizer stops
 * at the first rule that allows it), "what may I do here?" (`kubectl auth can-i --list`
 * collects every rule) and "does the requester hold these rules?" (the escalation check).
 *
 * Invariants:
 * - ClusterRoleBindings first, then the RoleBindings of the namespace (none for a
 *   cluster-scoped request); a RoleBinding to a ClusterRole grants that role's rules in the
 *   binding's namespace only, because it is only found for requests in that namespace;
 * - a binding whose role does not exist grants nothing, and the error is passed on (it
 *   becomes the denial's reason `RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`);
 * - the visitor returns false to stop the walk.
 *
 * @upstream kubernetes/kubernetes pkg/registry/rbac/validation/rule.go (DefaultRuleResolver.VisitRulesFor, RulesFor, GetRoleReferenceRules, clusterRoleBindingDescriber, roleBindingDescriber, describeSubject)
 * @chapter 03-api-security
 */
import type { PolicyRule, RoleBinding, RoleRef, Subject } from "../../../api/rbac.ts";
import type { UserInfo } from "../../authn/user.ts";
import { type RBACIndex, subjectKey, userKeys } from "./index.ts";

/** Where a rule came from: `ClusterRoleBinding "x" of ClusterRole "y" to User "z"`. */
export type RuleVisitor = (
  source: string | undefined,
  rule: PolicyRule | undefined,
  err: string | undefined,
) => boolean;

// #region describe
function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === "ServiceAccount")
    return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

function describe(b: RoleBinding, subject: Subject, namespaced: boolean): string {
  const ns = b.metadata.namespace ?? "";
  const name = namespaced ? `${b.metadata.name}/${ns}` : (b.metadata.name ?? "");
  const kind = namespaced ? "RoleBinding" : "ClusterRoleBinding";
  return `${kind} ${JSON.stringify(name)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, ns)}`;
}
// #endregion describe

export class DefaultRuleResolver {
  constructor(private readonly index: RBACIndex) {}

  // #region role-reference-rules
  /** GetRoleReferenceRules: the rules of the role a binding points at, or why there are none. */
  getRoleReferenceRules(ref: RoleRef, bindingNamespace: string): { rules: PolicyRule[]; err?: string } {
    if (ref.kind === "Role") {
      const role = this.index.getRole(bindingNamespace, ref.name);
      if (!role)
        return { rules: [], err: `role.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found` };
      return { rules: role.rules ?? [] };
    }
    if (ref.kind === "ClusterRole") {
      const role = this.index.getClusterRole(ref.name);
      if (!role)
        return {
          rules: [],
          err: `clusterrole.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found`,
        };
      return { rules: role.rules ?? [] };
    }
    return { rules: [], err: `unsupported role reference kind: ${JSON.stringify(ref.kind)}` };
  }
  // #endregion role-reference-rules

  // #region visit-rules-for
  /** VisitRulesFor: each rule the user holds in `namespace`, from the index's bindings only. */
  visitRulesFor(user: UserInfo, namespace: string, visitor: RuleVisitor): void {
    const keys = new Set(userKeys(user));
    const { cluster, namespaced } = this.index.bindingsFor(user, namespace);
    for (const [bindings, isNamespaced] of [
      [cluster, false],
      [namespaced, true],
    ] as const) {
      for (const b of bindings) {
        const bindingNamespace = isNamespaced ? (b.metadata.namespace ?? "") : "";
        // The first subject that names the user is the one the reason mentions (upstream's appliesTo).
        const subject = (b.subjects ?? []).find((s) => keys.has(subjectKey(s, bindingNamespace)));
        if (!subject) continue;
        const { rules, err } = this.getRoleReferenceRules(b.roleRef, bindingNamespace);
        if (err) {
          if (!visitor(undefined, undefined, err)) return;
          continue;
        }
        const source = describe(b, subject, isNamespaced);
        for (const rule of rules) if (!visitor(source, rule, undefined)) return;
      }
    }
  }
  // #endregion visit-rules-for

  /** RulesFor: every rule, and the errors met (the list is then possibly incomplete). */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(user, namespace, (_source, rule, err) => {
      if (rule) rules.push(rule);
      if (err) errors.push(err);
      return true;
    });
    return { rules, errors };
  }
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several as `[a, b]`. */
export function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? (errors[0] as string) : `[${errors.join(", ")}]`;
}
