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
 * - the rule data is upstream's v1.32 data for these roles, written out here; upstream has
 *   ~60 more roles (system:controller:*, system:node-proxier, …) not listed.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (ClusterRoles, ClusterRoleBindings, Read, ReadWrite, eventsRule)
 * @chapter 03-api-security
 */
import type { ClusterRole, ClusterRoleBinding, PolicyRule } from "../../../api/rbac.ts";

const legacy = "";
const apps = "apps";
const authentication = "authentication.k8s.io";
const authorization = "authorization.k8s.io";
const autoscaling = "autoscaling";
const batch = "batch";
const certificates = "certificates.k8s.io";
const coordination = "coordination.k8s.io";
const discovery = "discovery.k8s.io";
const events = "events.k8s.io";
const extensions = "extensions";
const networking = "networking.k8s.io";
const node = "node.k8s.io";
const policy = "policy";
const rbacGroup = "rbac.authorization.k8s.io";
const storage = "storage.k8s.io";

const Read = ["get", "list", "watch"];
const Write = ["create", "update", "patch", "delete", "deletecollection"];
const ReadWrite = [...Read, ...Write];

/** rbacv1helpers.NewRule(verbs).Groups(…).Resources(…)[.Names(…)] */
const rule = (verbs: string[], groups: string[], resources: string[], names?: string[]): PolicyRule =>
  names
    ? { verbs, apiGroups: groups, resources, resourceNames: names }
    : { verbs, apiGroups: groups, resources };
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });

const eventsRule = rule(["create", "update", "patch"], [legacy, events], ["events"]);

export const autoupdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate";
const aggregateTo = (name: string) => `rbac.authorization.k8s.io/aggregate-to-${name}`;

function clusterRole(
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
      rule(Read, [legacy], ["pods"]),
      rule(["delete"], [legacy], ["pods"]), // preemption
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
      rule(["get"], [legacy], ["namespaces", "secrets", "serviceaccounts"]),
      rule(["update"], [legacy], ["secrets", "serviceaccounts"]),
      rule(["create"], [authentication], ["tokenreviews"]),
      rule(["create"], [authorization], ["subjectaccessreviews"]),
      // Its informers watch everything.
      rule(["list", "watch"], ["*"], ["*"]),
      rule(["create"], [legacy], ["serviceaccounts/token"]),
    ]),
    clusterRole("system:node", [
      rule(["create"], [authentication], ["tokenreviews"]),
      rule(["create"], [authorization], ["subjectaccessreviews", "localsubjectaccessreviews"]),
      rule(Read, [legacy], ["services"]),
      rule(["create", "get", "list", "watch"], [legacy], ["nodes"]),
      rule(["update", "patch"], [legacy], ["nodes/status"]),
      rule(["update", "patch"], [legacy], ["nodes"]),
      eventsRule,
      rule(Read, [legacy], ["pods"]),
      rule(["create", "delete"], [legacy], ["pods"]),
      rule(["update", "patch"], [legacy], ["pods/status"]),
      rule(["create"], [legacy], ["pods/eviction"]),
      rule(["get"], [legacy], ["secrets", "configmaps"]),
      rule(["get"], [legacy], ["persistentvolumeclaims", "persistentvolumes"]),
      rule(["get"], [legacy], ["endpoints"]),
      rule(["create", "get", "list", "watch"], [certificates], ["certificatesigningrequests"]),
      rule(["get", "create", "update", "patch", "delete"], [coordination], ["leases"]),
      rule(["get"], [storage], ["volumeattachments"]),
      rule(["create"], [legacy], ["serviceaccounts/token"]),
      rule(["update", "patch"], [legacy], ["persistentvolumeclaims/status"]),
      rule(["get"], [storage], ["csidrivers"]),
      rule(["get", "create", "update", "patch", "delete"], [storage], ["csinodes"]),
      rule(Read, [node], ["runtimeclasses"]),
    ]),
  ];
}
// #endregion cluster-roles

// #region cluster-role-bindings
type Subj = { kind: "User" | "Group"; name: string };
const user = (name: string): Subj => ({ kind: "User", name });
const group = (name: string): Subj => ({ kind: "Group", name });

function binding(role: string, ...subjects: Subj[]): ClusterRoleBinding {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: {
      name: role,
      labels: { "kubernetes.io/bootstrapping": "rbac-defaults" },
      annotations: { [autoupdateAnnotation]: "true" },
    },
    roleRef: { apiGroup: rbacGroup, kind: "ClusterRole", name: role },
    ...(subjects.length ? { subjects: subjects.map((s) => ({ ...s, apiGroup: rbacGroup })) } : {}),
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
