/**
 * The node rules — what every kubelet may do regardless of which pods it runs: the static half
 * of the Node authorizer, the rules of the `system:node` ClusterRole. Upstream: kubernetes
 * plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (NodeRules) and the matching of
 * plugin/pkg/auth/authorizer/rbac/rbac.go (RulesAllow, RuleAllows).
 *
 * Solves: since v1.8 the `system:node` role is no longer bound to `system:nodes` — the Node
 * authorizer applies these same rules itself, after the graph-based checks, so a cluster needs
 * no RoleBinding for its kubelets and an admin cannot widen them by accident.
 *
 * Invariants:
 * - the same list is the `system:node` ClusterRole (rbac/bootstrap-policy.ts), as upstream
 *   builds both from NodeRules(); rbac/bootstrap-policy.test.ts checks it rule by rule against
 *   upstream's golden file (bootstrappolicy/testdata/cluster-roles.yaml);
 * - v1.32 with its default feature gates (DynamicResourceAllocation and ClusterTrustBundle off,
 *   so no resourceclaims/resourceslices/clustertrustbundles rules);
 * - secrets, configmaps, PVs, PVCs, pods, nodes, leases, serviceaccounts/token and CSINodes
 *   appear here but never reach these rules: the authorizer decides them first, by the graph
 *   or by name;
 * - matching is RBAC's: `*` matches any verb, group or resource, `*\/status` any status
 *   subresource, and a rule with no resourceNames any name.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go (NodeRules)
 * @upstream kubernetes/kubernetes pkg/apis/rbac/v1/evaluation_helpers.go (VerbMatches, APIGroupMatches, ResourceMatches, ResourceNameMatches)
 * @chapter 03-api-security
 */
import type { Attributes } from "../authorizer.ts";

export interface PolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
}

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
});
const read = ["get", "list", "watch"];

// #region node-rules
/** v1.32's NodeRules(). */
export function nodeRules(): PolicyRule[] {
  return [
    // Needed to check API access; these creates change nothing.
    rule(["create"], ["authentication.k8s.io"], ["tokenreviews"]),
    rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews", "localsubjectaccessreviews"]),
    // The service lister, for the environment variables of services.
    rule(read, [""], ["services"]),
    // Registering and reporting; NodeRestriction limits each node to its own Node.
    rule(["create", "get", "list", "watch"], [""], ["nodes"]),
    rule(["update", "patch"], [""], ["nodes/status"]),
    rule(["update", "patch"], [""], ["nodes"]),
    rule(["create", "update", "patch"], [""], ["events"]),
    rule(read, [""], ["pods"]),
    // Mirror pods, pod status and evictions; NodeRestriction limits each to the node's pods.
    rule(["create", "delete"], [""], ["pods"]),
    rule(["update", "patch"], [""], ["pods/status"]),
    rule(["create"], [""], ["pods/eviction"]),
    // Volumes and env; the graph limits each node to what its pods reference.
    rule(read, [""], ["secrets", "configmaps"]),
    rule(["get"], [""], ["persistentvolumeclaims", "persistentvolumes"]),
    rule(["get"], [""], ["endpoints"]),
    // Client certificate rotation.
    rule(["create", "get", "list", "watch"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
    rule(["get", "create", "update", "patch", "delete"], ["coordination.k8s.io"], ["leases"]),
    rule(["get"], ["storage.k8s.io"], ["volumeattachments"]),
    rule(["create"], [""], ["serviceaccounts/token"]),
    rule(["get", "update", "patch"], [""], ["persistentvolumeclaims/status"]),
    rule(["get", "watch", "list"], ["storage.k8s.io"], ["csidrivers"]),
    rule(["get", "create", "update", "patch", "delete"], ["storage.k8s.io"], ["csinodes"]),
    rule(read, ["node.k8s.io"], ["runtimeclasses"]),
  ];
}
// #endregion node-rules

// #region rules-allow
function resourceMatches(r: PolicyRule, combined: string, subresource: string): boolean {
  return r.resources.some(
    (res) => res === "*" || res === combined || (subresource !== "" && res === `*/${subresource}`),
  );
}

/** RulesAllow for resource requests; the node rules have no non-resource URLs. */
export function rulesAllow(a: Attributes, rules: PolicyRule[]): boolean {
  if (!a.isResourceRequest) return false;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return rules.some(
    (r) =>
      (r.verbs.includes("*") || r.verbs.includes(a.verb)) &&
      (r.apiGroups.includes("*") || r.apiGroups.includes(a.apiGroup)) &&
      resourceMatches(r, combined, a.subresource) &&
      (!r.resourceNames?.length || r.resourceNames.includes(a.name)),
  );
}
// #endregion rules-allow
