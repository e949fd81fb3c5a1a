/**
 * RBAC strategies — roles, cluster roles and their bindings. Upstream: kubernetes
 * pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/strategy.go.
 *
 * Solves: nothing about these objects is owned by the server (no status, no generation), so
 * the strategies are the generic one; what is special — who may write a role or a binding —
 * is the escalation check's (authz/rbac/escalation.ts), which needs the requester and so
 * cannot live in a strategy.
 *
 * Invariants: a PUT may create (upstream AllowCreateOnUpdate is true for all four: the default
 * policy is reconciled with PUTs), and an update needs no resourceVersion.
 *
 * @upstream kubernetes/kubernetes pkg/registry/rbac/role/strategy.go (strategy: AllowCreateOnUpdate true)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/clusterrolebinding/strategy.go (strategy)
 * @chapter 03-api-security
 */
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy } from "./helpers.ts";

const rbacStrategy = (namespaced: boolean): RESTStrategy => ({
  ...baseStrategy(namespaced),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
});

export const roleStrategy = rbacStrategy(true);
export const roleBindingStrategy = rbacStrategy(true);
export const clusterRoleStrategy = rbacStrategy(false);
export const clusterRoleBindingStrategy = rbacStrategy(false);
