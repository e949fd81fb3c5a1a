/**
 * The RBAC index — roles by name and bindings by subject, so that one authorization decision
 * reads only the bindings that name the user, their groups or their service account.
 * Upstream reads the same objects from informer caches (listers) and, in v1.32, lists every
 * ClusterRoleBinding and every RoleBinding of the namespace per request
 * (pkg/registry/rbac/validation/rule.go VisitRulesFor); we index them instead.
 *
 * Solves: a cluster with thousands of bindings must not pay for all of them on every
 * request. A user carries a name and a few groups; each is one map lookup here, and the
 * bindings found are the only ones visited.
 *
 * Invariants:
 * - every binding is listed under the key of each of its subjects, and only there; a
 *   RoleBinding also only under its namespace, so another namespace's bindings are never read;
 * - a subject key is `User/<name>`, `Group/<name>` or `ServiceAccount/<ns>/<name>`, where a
 *   RoleBinding's service account without a namespace is in the binding's namespace, and a
 *   ClusterRoleBinding's is in no namespace at all (it never applies, as upstream's appliesTo);
 * - a change replaces the object: its old keys are removed before its new ones are added;
 * - `visited` counts the bindings handed out — tests use it to show a decision reads the
 *   subject's bindings only.
 *
 * @upstream kubernetes/kubernetes pkg/registry/rbac/validation/rule.go (appliesTo, appliesToUser: the subject rules the keys encode)
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go (RoleGetter, RoleBindingLister, ClusterRoleGetter, ClusterRoleBindingLister)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { ClusterRole, Role, RoleBinding, Subject } from "../../../api/rbac.ts";
import type { UserInfo } from "../../authn/user.ts";

export type RBACResource = "roles" | "clusterroles" | "rolebindings" | "clusterrolebindings";

// #region subject-keys
/** The key of a binding's subject ("" when it can never apply). */
export function subjectKey(s: Subject, bindingNamespace: string): string {
  switch (s.kind) {
    case "User":
      return `User/${s.name}`;
    case "Group":
      return `Group/${s.name}`;
    case "ServiceAccount": {
      const ns = s.namespace || bindingNamespace;
      return ns ? `ServiceAccount/${ns}/${s.name}` : "";
    }
    default:
      return "";
  }
}

const saPrefix = "system:serviceaccount:";

/** The keys a user is found under: their name, each group, and their service account if they are one. */
export function userKeys(user: UserInfo): string[] {
  const keys = [`User/${user.name}`, ...user.groups.map((g) => `Group/${g}`)];
  if (user.name.startsWith(saPrefix)) {
    const [ns, name, ...rest] = user.name.slice(saPrefix.length).split(":");
    if (ns && name && rest.length === 0) keys.push(`ServiceAccount/${ns}/${name}`);
  }
  return keys;
}
// #endregion subject-keys

/** Bindings of one scope (the cluster, or one namespace) by subject key. */
class BindingTable {
  readonly byName = new Map<string, RoleBinding>();
  readonly bySubject = new Map<string, Set<string>>();

  put(b: RoleBinding, namespace: string): void {
    const name = b.metadata.name ?? "";
    this.remove(name, namespace);
    this.byName.set(name, b);
    for (const key of this.keysOf(b, namespace)) {
      const names = this.bySubject.get(key) ?? new Set<string>();
      this.bySubject.set(key, names);
      names.add(name);
    }
  }

  remove(name: string, namespace: string): void {
    const old = this.byName.get(name);
    if (!old) return;
    this.byName.delete(name);
    for (const key of this.keysOf(old, namespace)) {
      const names = this.bySubject.get(key);
      names?.delete(name);
      if (names?.size === 0) this.bySubject.delete(key);
    }
  }

  private keysOf(b: RoleBinding, namespace: string): Set<string> {
    return new Set((b.subjects ?? []).map((s) => subjectKey(s, namespace)).filter(Boolean));
  }
}

// #region index
export class RBACIndex {
  private readonly roles = new Map<string, Role>(); // `<ns>/<name>`
  private readonly clusterRoles = new Map<string, ClusterRole>();
  private readonly clusterBindings = new BindingTable();
  private readonly namespaceBindings = new Map<string, BindingTable>();
  /** Bindings handed out by bindingsFor since the index was made (for tests). */
  visited = 0;

  getRole(namespace: string, name: string): Role | undefined {
    return this.roles.get(`${namespace}/${name}`);
  }

  getClusterRole(name: string): ClusterRole | undefined {
    return this.clusterRoles.get(name);
  }

  listClusterRoles(): ClusterRole[] {
    return [...this.clusterRoles.values()];
  }

  /**
   * The ClusterRoleBindings, and the RoleBindings of `namespace` ("" for none), that may name
   * this user — each at most once, sorted by name so that the reason a decision gives is stable.
   */
  bindingsFor(user: UserInfo, namespace: string): { cluster: RoleBinding[]; namespaced: RoleBinding[] } {
    const keys = userKeys(user);
    const cluster = this.lookup(this.clusterBindings, keys);
    const table = namespace ? this.namespaceBindings.get(namespace) : undefined;
    const namespaced = table ? this.lookup(table, keys) : [];
    this.visited += cluster.length + namespaced.length;
    return { cluster, namespaced };
  }

  private lookup(table: BindingTable, keys: string[]): RoleBinding[] {
    const names = new Set<string>();
    for (const key of keys) for (const n of table.bySubject.get(key) ?? []) names.add(n);
    return [...names].sort().map((n) => table.byName.get(n) as RoleBinding);
  }
  // #endregion index

  // #region keep-current
  /** An event from a store's watch (ADDED, MODIFIED, DELETED), applied. */
  apply(resource: RBACResource, type: string, obj: KubeObject): void {
    const name = obj.metadata?.name ?? "";
    const ns = obj.metadata?.namespace ?? "";
    const deleted = type === "DELETED";
    switch (resource) {
      case "roles":
        if (deleted) this.roles.delete(`${ns}/${name}`);
        else this.roles.set(`${ns}/${name}`, obj as Role);
        return;
      case "clusterroles":
        if (deleted) this.clusterRoles.delete(name);
        else this.clusterRoles.set(name, obj as ClusterRole);
        return;
      case "clusterrolebindings":
        if (deleted) this.clusterBindings.remove(name, "");
        else this.clusterBindings.put(obj as RoleBinding, "");
        return;
      case "rolebindings": {
        const table = this.namespaceBindings.get(ns) ?? new BindingTable();
        this.namespaceBindings.set(ns, table);
        if (deleted) table.remove(name, ns);
        else table.put(obj as RoleBinding, ns);
        if (table.byName.size === 0) this.namespaceBindings.delete(ns);
        return;
      }
    }
  }
  // #endregion keep-current
}
