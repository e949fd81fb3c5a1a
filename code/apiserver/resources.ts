/**
 * Resources — the table of what this API server serves, read by routing, discovery and OpenAPI.
 * Upstream has no one table: the same facts come from each group's REST storage, which
 * kubernetes pkg/controlplane/instance.go installs, and from k8s.io/apiserver's API installer
 * (pkg/endpoints/installer.go).
 *
 * Solves:
 * - kubectl learns everything from discovery (`kubectl get po` works because `pods` lists the
 *   short name `po`; `kubectl get all` because pods, services, deployments and replicasets are in
 *   category `all`), so the table must say what upstream's discovery says for these resources;
 * - the handler needs the same facts to route a URL: is the resource namespaced, which verbs
 *   and subresources exist (a verb not listed is a 405 MethodNotAllowed).
 *
 * Invariants:
 * - (group, version, resource) is unique; `kind` is the kind of the objects stored;
 * - verbs are upstream's discovery verbs for that resource, in upstream's sorted order;
 * - subresources are the ones this server serves, a subset of upstream's (pods upstream also
 *   has attach, portforward, proxy, ephemeralcontainers).
 *
 * @upstream kubernetes/kubernetes pkg/controlplane/instance.go (the resources each group serves)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/installer.go (APIInstaller: verbs and short names per resource)
 * @upstream kubernetes/kubernetes pkg/registry/authorization/selfsubjectaccessreview/rest.go (REST: create only, nothing stored)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/rest/storage_rbac.go (roles, rolebindings, clusterroles, clusterrolebindings)
 * @upstream kubernetes/kubernetes pkg/registry/policy/rest/storage_policy.go (poddisruptionbudgets, poddisruptionbudgets/status)
 * @upstream kubernetes/kubernetes pkg/registry/discovery/rest/storage_discovery.go (endpointslices)
 * @chapter 02-apiserver
 */

export interface SubresourceInfo {
  /** `status`, `scale`, `binding`, `log`. */
  name: string;
  /** The kind a request to the subresource carries (`Scale` is group autoscaling, version v1). */
  kind: string;
  group?: string;
  version?: string;
  verbs: string[];
}

export interface ResourceInfo {
  /** "" for the core group (served under /api/v1). */
  group: string;
  version: string;
  /** Plural, lower case, as in URLs: `pods`. */
  resource: string;
  singularName: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources: SubresourceInfo[];
  /**
   * false for a virtual resource that is computed per request and never written to storage
   * (`selfsubjectaccessreviews`: create answers "may I?" and keeps nothing). Absent means stored.
   */
  stored?: false;
}

const all = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
const status: SubresourceInfo = { name: "status", kind: "", verbs: ["get", "patch", "update"] };
const withStatus = (kind: string): SubresourceInfo => ({ ...status, kind });
const scale: SubresourceInfo = {
  name: "scale",
  kind: "Scale",
  group: "autoscaling",
  version: "v1",
  verbs: ["get", "patch", "update"],
};

// #region resources
export const resources: readonly ResourceInfo[] = [
  {
    group: "",
    version: "v1",
    resource: "namespaces",
    singularName: "namespace",
    kind: "Namespace",
    namespaced: false,
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    shortNames: ["ns"],
    subresources: [withStatus("Namespace"), { name: "finalize", kind: "Namespace", verbs: ["update"] }],
  },
  {
    group: "",
    version: "v1",
    resource: "pods",
    singularName: "pod",
    kind: "Pod",
    namespaced: true,
    verbs: all,
    shortNames: ["po"],
    categories: ["all"],
    subresources: [
      withStatus("Pod"),
      { name: "binding", kind: "Binding", verbs: ["create"] },
      { name: "log", kind: "Pod", verbs: ["get"] },
      // chapter 7: `kubectl exec` (a GET with a WebSocket upgrade; SPDY's is a POST)
      { name: "exec", kind: "PodExecOptions", verbs: ["create", "get"] },
      // chapter 8: `kubectl drain` evicts through it (a policy/v1 Eviction, as upstream's discovery says)
      { name: "eviction", kind: "Eviction", group: "policy", version: "v1", verbs: ["create"] },
    ],
  },
  {
    group: "",
    version: "v1",
    resource: "nodes",
    singularName: "node",
    kind: "Node",
    namespaced: false,
    verbs: all,
    shortNames: ["no"],
    subresources: [withStatus("Node")],
  },
  {
    group: "",
    version: "v1",
    resource: "events",
    singularName: "event",
    kind: "Event",
    namespaced: true,
    verbs: all,
    shortNames: ["ev"],
    subresources: [],
  },
  {
    group: "",
    version: "v1",
    resource: "configmaps",
    singularName: "configmap",
    kind: "ConfigMap",
    namespaced: true,
    verbs: all,
    shortNames: ["cm"],
    subresources: [],
  },
  {
    group: "",
    version: "v1",
    resource: "secrets",
    singularName: "secret",
    kind: "Secret",
    namespaced: true,
    verbs: all,
    subresources: [],
  },
  {
    group: "",
    version: "v1",
    resource: "serviceaccounts",
    singularName: "serviceaccount",
    kind: "ServiceAccount",
    namespaced: true,
    verbs: all,
    shortNames: ["sa"],
    // chapter 3: service-account tokens (TokenRequest, `kubectl create token`)
    subresources: [
      {
        name: "token",
        kind: "TokenRequest",
        group: "authentication.k8s.io",
        version: "v1",
        verbs: ["create"],
      },
    ],
  },
  {
    group: "",
    version: "v1",
    resource: "services",
    singularName: "service",
    kind: "Service",
    namespaced: true,
    // No deletecollection in v1.32 (k8s.io/api core/v1 Service: +genclient:skipVerbs=deleteCollection):
    // deleting a service releases its cluster IP and node ports, which a collection delete skipped.
    verbs: ["create", "delete", "get", "list", "patch", "update", "watch"],
    shortNames: ["svc"],
    categories: ["all"],
    subresources: [withStatus("Service")],
  },
  {
    group: "",
    version: "v1",
    resource: "endpoints",
    singularName: "endpoints",
    kind: "Endpoints",
    namespaced: true,
    verbs: all,
    shortNames: ["ep"],
    subresources: [],
  },
  {
    group: "apps",
    version: "v1",
    resource: "replicasets",
    singularName: "replicaset",
    kind: "ReplicaSet",
    namespaced: true,
    verbs: all,
    shortNames: ["rs"],
    categories: ["all"],
    subresources: [withStatus("ReplicaSet"), scale],
  },
  {
    group: "apps",
    version: "v1",
    resource: "deployments",
    singularName: "deployment",
    kind: "Deployment",
    namespaced: true,
    verbs: all,
    shortNames: ["deploy"],
    categories: ["all"],
    subresources: [withStatus("Deployment"), scale],
  },
  {
    group: "coordination.k8s.io",
    version: "v1",
    resource: "leases",
    singularName: "lease",
    kind: "Lease",
    namespaced: true,
    verbs: all,
    subresources: [],
  },
  {
    group: "scheduling.k8s.io",
    version: "v1",
    resource: "priorityclasses",
    singularName: "priorityclass",
    kind: "PriorityClass",
    namespaced: false,
    verbs: all,
    shortNames: ["pc"],
    subresources: [],
  },
  // chapter 3: admission — what LimitRanger and ResourceQuota read.
  {
    group: "",
    version: "v1",
    resource: "limitranges",
    singularName: "limitrange",
    kind: "LimitRange",
    namespaced: true,
    verbs: all,
    shortNames: ["limits"],
    subresources: [],
  },
  {
    group: "",
    version: "v1",
    resource: "resourcequotas",
    singularName: "resourcequota",
    kind: "ResourceQuota",
    namespaced: true,
    verbs: all,
    shortNames: ["quota"],
    subresources: [withStatus("ResourceQuota")],
  },
  {
    group: "authorization.k8s.io",
    version: "v1",
    resource: "selfsubjectaccessreviews",
    singularName: "selfsubjectaccessreview",
    kind: "SelfSubjectAccessReview",
    namespaced: false,
    verbs: ["create"],
    subresources: [],
    stored: false,
  },
  // chapter 3: RBAC — the four RBAC kinds (pkg/registry/rbac/rest/storage_rbac.go) and the other
  // access reviews (pkg/registry/authorization/rest/storage_authorization.go).
  ...rbacResources(),
  // chapter 3: webhooks (cluster-scoped, category api-extensions, no short names)
  {
    group: "admissionregistration.k8s.io",
    version: "v1",
    resource: "mutatingwebhookconfigurations",
    singularName: "mutatingwebhookconfiguration",
    kind: "MutatingWebhookConfiguration",
    namespaced: false,
    verbs: all,
    categories: ["api-extensions"],
    subresources: [],
  },
  {
    group: "admissionregistration.k8s.io",
    version: "v1",
    resource: "validatingwebhookconfigurations",
    singularName: "validatingwebhookconfiguration",
    kind: "ValidatingWebhookConfiguration",
    namespaced: false,
    verbs: all,
    categories: ["api-extensions"],
    subresources: [],
  },
  // chapter 3: ValidatingAdmissionPolicy (cluster-scoped, category api-extensions; upstream also
  // serves validatingadmissionpolicies/status, written by its type checker — not served here).
  {
    group: "admissionregistration.k8s.io",
    version: "v1",
    resource: "validatingadmissionpolicies",
    singularName: "validatingadmissionpolicy",
    kind: "ValidatingAdmissionPolicy",
    namespaced: false,
    verbs: all,
    categories: ["api-extensions"],
    subresources: [],
  },
  {
    group: "admissionregistration.k8s.io",
    version: "v1",
    resource: "validatingadmissionpolicybindings",
    singularName: "validatingadmissionpolicybinding",
    kind: "ValidatingAdmissionPolicyBinding",
    namespaced: false,
    verbs: all,
    categories: ["api-extensions"],
    subresources: [],
  },
  // chapter 3: serving and authentication — `kubectl auth whoami`. The singular name is
  // upstream's as its REST reports it (GetSingularName answers "selfsubjectrulesreview").
  {
    group: "authentication.k8s.io",
    version: "v1",
    resource: "selfsubjectreviews",
    singularName: "selfsubjectrulesreview",
    kind: "SelfSubjectReview",
    namespaced: false,
    verbs: ["create"],
    subresources: [],
    stored: false,
  },
  // chapter 5: PodDisruptionBudgets (pkg/registry/policy/rest/storage_policy.go)
  {
    group: "policy",
    version: "v1",
    resource: "poddisruptionbudgets",
    singularName: "poddisruptionbudget",
    kind: "PodDisruptionBudget",
    namespaced: true,
    verbs: all,
    shortNames: ["pdb"],
    subresources: [withStatus("PodDisruptionBudget")],
  },
  // EndpointSlices (pkg/registry/discovery/rest/storage_discovery.go): what `kubectl describe
  // service` lists for a service's endpoints. No short name upstream.
  {
    group: "discovery.k8s.io",
    version: "v1",
    resource: "endpointslices",
    singularName: "endpointslice",
    kind: "EndpointSlice",
    namespaced: true,
    verbs: all,
    subresources: [],
  },
];
// #endregion resources

/** chapter 3: RBAC — roles and bindings, stored; the reviews, computed per request. */
function rbacResources(): ResourceInfo[] {
  const rbac = (resource: string, kind: string, namespaced: boolean): ResourceInfo => ({
    group: "rbac.authorization.k8s.io",
    version: "v1",
    resource,
    singularName: kind.toLowerCase(),
    kind,
    namespaced,
    verbs: all,
    subresources: [],
  });
  const review = (resource: string, kind: string, namespaced: boolean): ResourceInfo => ({
    group: "authorization.k8s.io",
    version: "v1",
    resource,
    singularName: kind.toLowerCase(),
    kind,
    namespaced,
    verbs: ["create"],
    subresources: [],
    stored: false,
  });
  return [
    rbac("roles", "Role", true),
    rbac("rolebindings", "RoleBinding", true),
    rbac("clusterroles", "ClusterRole", false),
    rbac("clusterrolebindings", "ClusterRoleBinding", false),
    review("subjectaccessreviews", "SubjectAccessReview", false),
    review("localsubjectaccessreviews", "LocalSubjectAccessReview", true),
    review("selfsubjectrulesreviews", "SelfSubjectRulesReview", false),
  ];
}

export function findResource(group: string, version: string, resource: string): ResourceInfo | undefined {
  return resources.find((r) => r.group === group && r.version === version && r.resource === resource);
}

export function findKind(apiVersion: string, kind: string): ResourceInfo | undefined {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  return resources.find((r) => r.group === group && r.version === version && r.kind === kind);
}

/** `v1` for the core group, `apps/v1` otherwise. */
export function apiVersionOf(r: { group: string; version: string }): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}
