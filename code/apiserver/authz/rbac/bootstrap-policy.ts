/**
 * The bootstrap policy — the ClusterRoles and ClusterRoleBindings every cluster starts with.
 * Upstream: plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (ClusterRoles,
 * ClusterRoleBindings), reconciled at start by the `rbac/bootstrap-roles` post-start hook
 * (pkg/registry/rbac/rest/storage_rbac.go).
 *
 * Solves: a fresh cluster must already answer "the admin may do anything" (`system:masters`
 * → cluster-admin), "anyone logged in may ask what they may do and read discovery"
 * (system:basic-user, system:discovery), "anyone at all may read /healthz and /version"
 * (system:public-info-viewer) and "the scheduler and the controller manager may do their
 * jobs" — without anyone writing a role first.
 *
 * Invariants:
 * - every object carries `kubernetes.io/bootstrapping: rbac-defaults` and the annotation
 *   `rbac.authorization.kubernetes.io/autoupdate: "true"` (set it to "false" to keep your
 *   edits from being reconciled away);
 * - admin, edit and view have no rules of their own: they aggregate the roles labelled
 *   `rbac.authorization.k8s.io/aggregate-to-<name>: "true"` (view is itself labelled
 *   aggregate-to-edit, edit aggregate-to-admin, so each includes the one below);
 * - the rule data is upstream's v1.32 data for these roles, written out here and checked
 *   against a transcription of upstream's golden file in bootstrap-policy.test.ts; system:node
 *   is NodeRules() (node/node-rules.ts), shared with the Node authorizer as upstream shares it;
 *   the controllers' roles are in controller-policy.ts; upstream has ~20 more roles
 *   (system:node-proxier, system:kube-dns, the CSR approvers, …) not listed.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (ClusterRoles, ClusterRoleBindings, NodeRules, Read, ReadWrite, eventsRule)
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/cluster-roles.yaml (the golden output the test mirrors)
 * @chapter 03-api-security
 */
import type { ClusterRole, ClusterRoleBinding, PolicyRule, Subject } from "../../../api/rbac.ts";
import { nodeRules } from "../node/node-rules.ts";

const legacy = "";
const apps = "apps";
const authentication = "authentication.k8s.io";
const authorization = "authorization.k8s.io";
const autoscaling = "autoscaling";
const batch = "batch";
const coordination = "coordination.k8s.io";
const discovery = "discovery.k8s.io";
const events = "events.k8s.io";
const extensions = "extensions";
const networking = "networking.k8s.io";
const policy = "policy";
const rbacGroup = "rbac.authorization.k8s.io";
const storage = "storage.k8s.io";

const Read = ["get", "list", "watch"];
const Write = ["create", "update", "patch", "delete", "deletecollection"];
const ReadWrite = [...Read, ...Write];

/** rbacv1helpers.NewRule(verbs).Groups(…).Resources(…)[.Names(…)] */
export const rule = (verbs: string[], groups: string[], resources: string[], names?: string[]): PolicyRule =>
  names
    ? { verbs, apiGroups: groups, resources, resourceNames: names }
    : { verbs, apiGroups: groups, resources };
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

export const eventsRule = rule(["create", "update", "patch"], [legacy, events], ["events"]);

export const autoupdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate";
const aggregateTo = (name: string) => `rbac.authorization.k8s.io/aggregate-to-${name}`;

export function clusterRole(
  name: string,
  rules: PolicyRule[],
  extra: Partial<ClusterRole> = {},
  labels = {},
): ClusterRole {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: {
      name,
      labels: { "kubernetes.io/bootstrapping": "rbac-defaults", ...labels },
      annotations: { [autoupdateAnnotation]: "true" },
    },
    rules,
    ...extra,
  };
}

const aggregated = (name: string, labels: Record<string, string> = {}): ClusterRole =>
  clusterRole(
    name,
    [],
    { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregateTo(name)]: "true" } }] } },
    labels,
  );

// #region cluster-roles
export function bootstrapClusterRoles(): ClusterRole[] {
  return [
    // The superuser: every verb on everything, and every URL.
    clusterRole("cluster-admin", [rule(["*"], ["*"], ["*"]), urls(["*"], ["*"])]),
    clusterRole("system:discovery", [
      urls(
        ["get"],
        [
          "/livez",
          "/readyz",
          "/healthz",
          "/version",
          "/version/",
          "/api",
          "/api/*",
          "/apis",
          "/apis/*",
          "/openapi",
          "/openapi/*",
        ],
      ),
    ]),
    clusterRole("system:monitoring", [
      urls(
        ["get"],
        ["/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"],
      ),
    ]),
    // What every logged-in user may ask about themselves.
    clusterRole("system:basic-user", [
      rule(["create"], [authorization], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
      rule(["create"], [authentication], ["selfsubjectreviews"]),
    ]),
    clusterRole("system:public-info-viewer", [
      urls(["get"], ["/livez", "/readyz", "/healthz", "/version", "/version/"]),
    ]),
    // The user-facing roles: filled in by aggregation.
    aggregated("admin"),
    aggregated("edit", { [aggregateTo("admin")]: "true" }),
    aggregated("view", { [aggregateTo("edit")]: "true" }),
    clusterRole(
      "system:aggregate-to-admin",
      [
        rule(["create"], [authorization], ["localsubjectaccessreviews"]),
        rule(ReadWrite, [rbacGroup], ["roles", "rolebindings"]),
      ],
      {},
      { [aggregateTo("admin")]: "true" },
    ),
    clusterRole(
      "system:aggregate-to-edit",
      [
        // Read on the resources that can escalate (a pod's exec, a secret).
        rule(
          Read,
          [legacy],
          ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"],
        ),
        rule(["impersonate"], [legacy], ["serviceaccounts"]),
        rule(Write, [legacy], ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"]),
        rule(["create"], [legacy], ["pods/eviction"]),
        rule(
          Write,
          [legacy],
          [
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/proxy",
            "persistentvolumeclaims",
            "configmaps",
            "secrets",
            "events",
          ],
        ),
        rule(["create"], [legacy], ["serviceaccounts/token"]),
        rule(
          Write,
          [apps],
          [
            "statefulsets",
            "statefulsets/scale",
            "daemonsets",
            "deployments",
            "deployments/scale",
            "deployments/rollback",
            "replicasets",
            "replicasets/scale",
          ],
        ),
        rule(Write, [autoscaling], ["horizontalpodautoscalers"]),
        rule(Write, [batch], ["jobs", "cronjobs"]),
        rule(
          Write,
          [extensions],
          [
            "daemonsets",
            "deployments",
            "deployments/scale",
            "deployments/rollback",
            "ingresses",
            "networkpolicies",
            "replicasets",
            "replicasets/scale",
            "replicationcontrollers/scale",
          ],
        ),
        rule(Write, [policy], ["poddisruptionbudgets"]),
        rule(Write, [networking], ["networkpolicies", "ingresses"]),
        rule(ReadWrite, [coordination], ["leases"]),
      ],
      {},
      { [aggregateTo("edit")]: "true" },
    ),
    clusterRole(
      "system:aggregate-to-view",
      [
        rule(
          Read,
          [legacy],
          [
            "pods",
            "replicationcontrollers",
            "replicationcontrollers/scale",
            "serviceaccounts",
            "services",
            "services/status",
            "endpoints",
            "persistentvolumeclaims",
            "persistentvolumeclaims/status",
            "configmaps",
          ],
        ),
        rule(
          Read,
          [legacy],
          [
            "limitranges",
            "resourcequotas",
            "bindings",
            "events",
            "pods/status",
            "resourcequotas/status",
            "namespaces/status",
            "replicationcontrollers/status",
            "pods/log",
          ],
        ),
        // Namespaces are readable but not writable by view and edit.
        rule(Read, [legacy], ["namespaces"]),
        rule(Read, [discovery], ["endpointslices"]),
        rule(
          Read,
          [apps],
          [
            "controllerrevisions",
            "statefulsets",
            "statefulsets/status",
            "statefulsets/scale",
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/status",
            "deployments/scale",
            "replicasets",
            "replicasets/status",
            "replicasets/scale",
          ],
        ),
        rule(Read, [autoscaling], ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
        rule(Read, [batch], ["jobs", "cronjobs", "cronjobs/status", "jobs/status"]),
        rule(
          Read,
          [extensions],
          [
            "daemonsets",
            "daemonsets/status",
            "deployments",
            "deployments/scale",
            "deployments/status",
            "ingresses",
            "ingresses/status",
            "replicasets",
            "replicasets/scale",
            "replicasets/status",
            "replicationcontrollers/scale",
            "networkpolicies",
          ],
        ),
        rule(Read, [policy], ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
        rule(Read, [networking], ["networkpolicies", "ingresses", "ingresses/status"]),
      ],
      {},
      { [aggregateTo("view")]: "true" },
    ),
    clusterRole("system:kube-scheduler", [
      eventsRule,
      // Leader election: anyone of the role may create the lock; only this name may be renewed.
      rule(["create"], [coordination], ["leases"]),
      rule(["get", "update"], [coordination], ["leases"], ["kube-scheduler"]),
      rule(Read, [legacy], ["nodes"]),
      rule([...Read, "delete"], [legacy], ["pods"]), // delete: preemption
      rule(["create"], [legacy], ["pods/binding", "bindings"]),
      rule(["patch", "update"], [legacy], ["pods/status"]),
      rule(Read, [legacy], ["replicationcontrollers", "services"]),
      rule(Read, [apps, extensions], ["replicasets"]),
      rule(Read, [apps], ["statefulsets"]),
      rule(Read, [policy], ["poddisruptionbudgets"]),
      rule(Read, [legacy], ["persistentvolumeclaims", "persistentvolumes"]),
      rule(["create"], [authentication], ["tokenreviews"]),
      rule(["create"], [authorization], ["subjectaccessreviews"]),
      rule(Read, [storage], ["csinodes"]),
      rule(Read, [legacy], ["namespaces"]),
      rule(Read, [storage], ["csidrivers"]),
      rule(Read, [storage], ["csistoragecapacities"]),
    ]),
    clusterRole("system:kube-controller-manager", [
      eventsRule,
      rule(["create"], [coordination], ["leases"]),
      rule(["get", "update"], [coordination], ["leases"], ["kube-controller-manager"]),
      // The service-account credentials it mints for its controllers.
      rule(["create"], [legacy], ["secrets", "serviceaccounts"]),
      rule(["delete"], [legacy], ["secrets"]),
      // configmaps: the extension-apiserver-authentication ConfigMap it reads at start.
      rule(["get"], [legacy], ["configmaps", "namespaces", "secrets", "serviceaccounts"]),
      rule(["update"], [legacy], ["secrets", "serviceaccounts"]),
      rule(["create"], [authentication], ["tokenreviews"]),
      rule(["create"], [authorization], ["subjectaccessreviews"]),
      // Its informers watch everything.
      rule(["list", "watch"], ["*"], ["*"]),
      rule(["create"], [legacy], ["serviceaccounts/token"]),
    ]),
    // The kubelets' role; bound to no one (see the bindings) — the Node authorizer applies
    // these same rules itself, so both read them from one place.
    clusterRole("system:node", nodeRules()),
  ];
}
// #endregion cluster-roles

// #region cluster-role-bindings
const user = (name: string): Subject => ({ kind: "User", apiGroup: rbacGroup, name });
const group = (name: string): Subject => ({ kind: "Group", apiGroup: rbacGroup, name });
/** A ServiceAccount subject has no apiGroup (rbacv1helpers' SAs()). */
export const serviceAccount = (namespace: string, name: string): Subject => ({
  kind: "ServiceAccount",
  name,
  namespace,
});

/** rbacv1helpers.NewClusterBinding(role).Users/Groups/SAs(…): the binding is named after its role. */
export function binding(role: string, ...subjects: Subject[]): ClusterRoleBinding {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: {
      name: role,
      labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
      annotations: { [autoupdateAnnotation]: "true" },
    },
    roleRef: { apiGroup: rbacGroup, kind: "ClusterRole", name: role },
    ...(subjects.length ? { subjects } : {}),
  };
}

export function bootstrapClusterRoleBindings(): ClusterRoleBinding[] {
  return [
    binding("cluster-admin", group("system:masters")),
    binding("system:monitoring", group("system:monitoring")),
    binding("system:discovery", group("system:authenticated")),
    binding("system:basic-user", group("system:authenticated")),
    binding("system:public-info-viewer", group("system:authenticated"), group("system:unauthenticated")),
    binding("system:kube-controller-manager", user("system:kube-controller-manager")),
    binding("system:kube-scheduler", user("system:kube-scheduler")),
    // Bound to no one since v1.8: nodes are authorized by the Node authorizer instead.
    binding("system:node"),
  ];
}
// #endregion cluster-role-bindings
