/**
 * Escalation prevention — a user may not write a role or a binding that grants more than they
 * already hold, unless they are explicitly allowed to (`escalate` on roles, `bind` on the
 * role a binding names). Upstream: the policy-based storage of pkg/registry/rbac/
 * {role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go, with
 * pkg/registry/rbac/escalation_check.go and validation.ConfirmNoEscalation (rule.go).
 *
 * Solves: without it, anyone allowed to create RoleBindings could bind themselves to
 * cluster-admin, and anyone allowed to edit a Role could add `*` to it: the permission to
 * manage permissions would be every permission. With it, delegation is safe — a namespace
 * admin can hand out exactly the rights they have, and no more.
 *
 * Invariants:
 * - `system:masters` skips every check (upstream's EscalationAllowed: the loopback client);
 * - a role write passes when the writer holds `escalate` on it, or holds every rule in it
 *   (Covers); a ClusterRole with a new aggregationRule needs full authority (`*` on
 *   everything), since it can gather any rule;
 * - a binding write passes when the writer holds `bind` on the referenced role (checked in
 *   the binding's namespace), or holds every rule of that role; a role that does not exist
 *   is a 403 naming it;
 * - the checks run on the object as it will be stored: for an update, inside the update's
 *   retry loop, on the merged object;
 * - an update that only touches ownerReferences or finalizers (the garbage collector's
 *   fields) is not checked.
 *
 * @upstream kubernetes/kubernetes pkg/registry/rbac/escalation_check.go (EscalationAllowed, RoleEscalationAuthorized, BindingAuthorized)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/validation/rule.go (ConfirmNoEscalation)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/role/policybased/storage.go (Storage.Create, Storage.Update)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/clusterrole/policybased/storage.go (fullAuthority, hasAggregationRule)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/rolebinding/policybased/storage.go (Storage.Create, Storage.Update)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/helpers.go (IsOnlyMutatingGCFields)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { ClusterRole, PolicyRule, Role, RoleBinding, RoleRef } from "../../../api/rbac.ts";
import { SystemPrivilegedGroup, type UserInfo } from "../../authn/user.ts";
import { newForbidden } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import type { Authorizer } from "../authorizer.ts";
import { compactRules, compactString, covers, goQuoteList } from "./policy-comparator.ts";
import { aggregate, type DefaultRuleResolver } from "./rule-resolver.ts";

export interface EscalationDeps {
  /** The server's whole authorizer (all modes), asked about `escalate` and `bind`. */
  authorizer: Authorizer;
  /** Whose rules a requester holds; absent (RBAC off): they hold none. */
  resolver?: DefaultRuleResolver;
}

// #region escalation-allowed
/** EscalationAllowed: members of system:masters may grant anything. */
export const escalationAllowed = (user: UserInfo): boolean => user.groups.includes(SystemPrivilegedGroup);

/** RoleEscalationAuthorized: does the user hold `escalate` on this role? */
async function roleEscalationAuthorized(
  user: UserInfo,
  resource: string,
  namespace: string,
  name: string,
  authorizer: Authorizer,
): Promise<boolean> {
  const { decision } = await authorizer.authorize({
    user,
    verb: "escalate",
    isResourceRequest: true,
    path: "",
    namespace,
    apiGroup: "rbac.authorization.k8s.io",
    apiVersion: "*",
    resource,
    subresource: "",
    name,
  });
  return decision === "allow";
}

/** BindingAuthorized: does the user hold `bind` on the role, in the binding's namespace? */
async function bindingAuthorized(
  user: UserInfo,
  ref: RoleRef,
  namespace: string,
  authorizer: Authorizer,
): Promise<boolean> {
  if (ref.kind !== "Role" && ref.kind !== "ClusterRole") return false;
  const { decision } = await authorizer.authorize({
    user,
    verb: "bind",
    isResourceRequest: true,
    path: "",
    namespace,
    apiGroup: ref.apiGroup,
    apiVersion: "",
    resource: ref.kind === "Role" ? "roles" : "clusterroles",
    subresource: "",
    name: ref.name,
  });
  return decision === "allow";
}
// #endregion escalation-allowed

// #region confirm-no-escalation
/** ConfirmNoEscalation: undefined when the user holds every rule; else upstream's message. */
export function confirmNoEscalation(
  user: UserInfo,
  namespace: string,
  rules: readonly PolicyRule[],
  resolver: DefaultRuleResolver | undefined,
): string | undefined {
  const { rules: owned, errors } = resolver?.rulesFor(user, namespace) ?? { rules: [], errors: [] };
  const [ok, missing] = covers(owned, rules);
  if (ok) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join("\n")}`;
  if (errors.length) msg += `; resolution errors: ${aggregate(errors)}`;
  return msg;
}
// #endregion confirm-no-escalation

const fullAuthority: PolicyRule[] = [
  { verbs: ["*"], apiGroups: ["*"], resources: ["*"] },
  { verbs: ["*"], nonResourceURLs: ["*"] },
];

/** IsOnlyMutatingGCFields: the update changes nothing but ownerReferences and finalizers. */
function onlyGCFields(obj: KubeObject, old: KubeObject): boolean {
  const strip = (o: KubeObject) => {
    const c = structuredClone(o);
    for (const f of ["ownerReferences", "finalizers", "resourceVersion", "managedFields"] as const)
      delete c.metadata[f];
    return JSON.stringify(c);
  };
  return strip(obj) === strip(old);
}

// #region checks
type Check = (
  user: UserInfo,
  obj: KubeObject,
  old: KubeObject | undefined,
  deps: EscalationDeps,
) => Promise<void>;

const forbidden = (resource: string, name: string, msg: string) =>
  newForbidden({ group: "rbac.authorization.k8s.io", resource }, name, msg);

/** Roles and ClusterRoles: `escalate`, or every rule already held. */
function roleCheck(resource: "roles" | "clusterroles"): Check {
  return async (user, obj, old, deps) => {
    if (escalationAllowed(user)) return;
    if (old && onlyGCFields(obj, old)) return;
    const name = obj.metadata.name ?? "";
    const ns = obj.metadata.namespace ?? "";
    if (await roleEscalationAuthorized(user, resource, ns, name, deps.authorizer)) return;
    const msg = confirmNoEscalation(user, ns, (obj as Role).rules ?? [], deps.resolver);
    if (msg) throw forbidden(resource, name, msg);
    const aggregation = (obj as ClusterRole).aggregationRule;
    const changed =
      JSON.stringify(aggregation ?? null) !==
      JSON.stringify((old as ClusterRole | undefined)?.aggregationRule ?? null);
    if (resource === "clusterroles" && aggregation && (!old || changed)) {
      if (confirmNoEscalation(user, ns, fullAuthority, deps.resolver)) {
        throw forbidden(resource, name, "must have cluster-admin privileges to use the aggregationRule");
      }
    }
  };
}

/** RoleBindings and ClusterRoleBindings: `bind` on the role, or every rule of it already held. */
function bindingCheck(resource: "rolebindings" | "clusterrolebindings"): Check {
  return async (user, obj, old, deps) => {
    if (escalationAllowed(user)) return;
    if (old && onlyGCFields(obj, old)) return;
    const b = obj as RoleBinding;
    const name = b.metadata.name ?? "";
    const ns = b.metadata.namespace ?? "";
    if (await bindingAuthorized(user, b.roleRef, ns, deps.authorizer)) return;
    const resolved = deps.resolver?.getRoleReferenceRules(b.roleRef, ns) ?? { rules: [], err: undefined };
    if (resolved.err) throw forbidden(resource, name, resolved.err);
    const msg = confirmNoEscalation(user, ns, resolved.rules, deps.resolver);
    if (msg) throw forbidden(resource, name, msg);
  };
}

const checks: Record<string, Check> = {
  roles: roleCheck("roles"),
  clusterroles: roleCheck("clusterroles"),
  rolebindings: bindingCheck("rolebindings"),
  clusterrolebindings: bindingCheck("clusterrolebindings"),
};
// #endregion checks

// #region policy-based-store
/**
 * The store of an RBAC resource as the requester sees it: create and update check escalation
 * first (upstream wraps the standard storage the same way). Any other resource: the store as is.
 */
export function withEscalationChecks(store: Store, user: UserInfo | undefined, deps: EscalationDeps): Store {
  const check = checks[store.info.resource];
  if (store.info.group !== "rbac.authorization.k8s.io" || !check || !user) return store;
  const guarded = Object.create(store) as Store;
  guarded.create = async (namespace, obj, opts) => {
    // The handler fills the namespace from the URL only inside create; the check needs it now.
    if (store.info.namespaced && namespace) obj.metadata.namespace ??= namespace;
    await check(user, obj, undefined, deps);
    return store.create(namespace, obj, opts);
  };
  guarded.update = (namespace, name, updated, opts) =>
    store.update(
      namespace,
      name,
      async (current) => {
        const old = current && structuredClone(current); // `updated` may change what it is given
        const obj = await updated(current);
        const withScope = {
          ...obj,
          metadata: { ...obj.metadata, name, ...(store.info.namespaced ? { namespace } : {}) },
        };
        await check(user, withScope, old, deps);
        return obj;
      },
      opts,
    );
  return guarded;
}
// #endregion policy-based-store
