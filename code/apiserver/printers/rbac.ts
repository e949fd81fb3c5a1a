/**
 * rbac.authorization.k8s.io/v1 tables: roles and clusterroles (NAME CREATED AT), rolebindings
 * and clusterrolebindings (NAME ROLE AGE; wide: USERS GROUPS SERVICEACCOUNTS). Upstream:
 * printRole, printClusterRole, printRoleBinding, printClusterRoleBinding in
 * pkg/printers/internalversion/printers.go.
 *
 * Solves: "who can do what?" at a glance — `kubectl get rolebindings -o wide` shows which role
 * each binding grants and to whom, without reading YAML.
 *
 * Invariants: ROLE is `<Kind>/<name>`; a service account prints as `<namespace>/<name>`
 * (its namespace as written, possibly empty); lists are joined with ", ".
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printRole, printRoleBinding, printClusterRoleBinding)
 * @upstream kubernetes/kubernetes pkg/apis/rbac/helpers.go (SubjectsStrings)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../api/meta.ts";
import type { RoleBinding, Subject } from "../../api/rbac.ts";
import {
  ageColumn,
  column,
  creationTimestampDescription,
  nameColumn,
  translateTimestampSince,
} from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

const rolePrinter: TablePrinter = {
  columns: [nameColumn, column("Created At", "date", creationTimestampDescription)],
  print: (obj: KubeObject) => ({
    cells: [obj.metadata.name ?? "", obj.metadata.creationTimestamp ?? "0001-01-01T00:00:00Z"],
  }),
};

/** SubjectsStrings: users, groups and service accounts of a binding. */
export function subjectsStrings(subjects: readonly Subject[] | undefined): [string[], string[], string[]] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of subjects ?? []) {
    if (s.kind === "ServiceAccount") sas.push(`${s.namespace ?? ""}/${s.name}`);
    else if (s.kind === "User") users.push(s.name);
    else if (s.kind === "Group") groups.push(s.name);
  }
  return [users, groups, sas];
}

const bindingPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "Role",
      "string",
      "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.",
    ),
    ageColumn,
    column("Users", "string", "Users in the roleBinding", 1),
    column("Groups", "string", "Groups in the roleBinding", 1),
    column("ServiceAccounts", "string", "ServiceAccounts in the roleBinding", 1),
  ],
  print: (obj: KubeObject, now) => {
    const b = obj as RoleBinding;
    const [users, groups, sas] = subjectsStrings(b.subjects);
    return {
      cells: [
        b.metadata.name ?? "",
        `${b.roleRef?.kind ?? ""}/${b.roleRef?.name ?? ""}`,
        translateTimestampSince(b.metadata.creationTimestamp, now),
        users.join(", "),
        groups.join(", "),
        sas.join(", "),
      ],
    };
  },
};

export const rbacPrinters: Readonly<Record<string, TablePrinter>> = {
  roles: rolePrinter,
  clusterroles: rolePrinter,
  rolebindings: bindingPrinter,
  clusterrolebindings: bindingPrinter,
};
