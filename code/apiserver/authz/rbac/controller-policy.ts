/**
 * The controller roles — one ClusterRole per controller of kube-controller-manager, named
 * `system:controller:<controller>` and bound to the ServiceAccount `kube-system/<controller>`.
 * Upstream: plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go
 * (buildControllerRoles, addControllerRole), reconciled at start beside policy.go's roles.
 *
 * Solves: with `--use-service-account-credentials` the controller-manager runs each controller
 * under its own ServiceAccount (it mints their tokens with its own role,
 * system:kube-controller-manager). A bug in one controller then reaches only what that
 * controller needs — the ReplicaSet controller can create pods but never read a secret — and
 * the audit log names the controller that made each request.
 *
 * Invariants:
 * - every role's name starts with `system:controller:`, and its binding has the same name and
 *   one subject: the ServiceAccount named by the rest of the role's name, in kube-system;
 * - labels and annotations are the bootstrap policy's (rbac-defaults, autoupdate "true");
 * - only the controllers the course's controller-manager runs (chapter 4) are here; upstream
 *   has ~35 more (job, daemon-set, endpoint, node, …), each in the same shape.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/controller_policy.go (buildControllerRoles, addControllerRole, ControllerRoles, ControllerRoleBindings)
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/controller-roles.yaml (the golden output the test mirrors)
 * @chapter 03-api-security
 */
import type { ClusterRole, ClusterRoleBinding } from "../../../api/rbac.ts";
import { binding, clusterRole, eventsRule, rule, serviceAccount } from "./bootstrap-policy.ts";

export const controllerRolePrefix = "system:controller:";
/** Where the controller-manager creates its controllers' ServiceAccounts. */
export const controllerNamespace = "kube-system";

const legacy = "";
const apps = "apps";
const extensions = "extensions";

// #region controller-roles
/** The rules of each controller, by the name of its ServiceAccount. */
function controllerRules() {
  return {
    "deployment-controller": [
      rule(["get", "list", "watch", "update"], [extensions, apps], ["deployments"]),
      rule(["update"], [extensions, apps], ["deployments/status"]),
      // finalizers: so the ReplicaSets it owns may set blockOwnerDeletion on their owner ref.
      rule(["update"], [extensions, apps], ["deployments/finalizers"]),
      rule(
        ["get", "list", "watch", "create", "update", "patch", "delete"],
        [apps, extensions],
        ["replicasets"],
      ),
      // update: kept for an old upstream bug (kubernetes#36897); it only reads pods.
      rule(["get", "list", "watch", "update"], [legacy], ["pods"]),
      eventsRule,
    ],
    // The garbage collector works on every resource: it cannot know the owners' kinds in advance.
    "generic-garbage-collector": [
      rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
      eventsRule,
    ],
    // The namespace controller empties a namespace of every kind of object, then finalizes it.
    "namespace-controller": [
      rule(["get", "list", "watch", "delete"], [legacy], ["namespaces"]),
      rule(["update"], [legacy], ["namespaces/finalize", "namespaces/status"]),
      rule(["get", "list", "watch", "delete", "deletecollection"], ["*"], ["*"]),
    ],
    "replicaset-controller": [
      rule(["get", "list", "watch", "update"], [apps, extensions], ["replicasets"]),
      rule(["update"], [apps, extensions], ["replicasets/status"]),
      rule(["update"], [apps, extensions], ["replicasets/finalizers"]),
      // patch: adopting and releasing pods rewrites their ownerReferences.
      rule(["list", "watch", "patch", "create", "delete"], [legacy], ["pods"]),
      eventsRule,
    ],
    // resource quota controller: it counts any kind a quota may name, so it reads everything.
    "resourcequota-controller": [
      rule(["list", "watch"], ["*"], ["*"]),
      rule(["update"], [legacy], ["resourcequotas/status"]),
      eventsRule,
    ],
    // chapter 5: the disruption controller reads the budgets' owners' scale, writes the budgets'
    // status and a DisruptionTarget condition on pods it resets.
    "disruption-controller": [
      rule(["get", "list", "watch"], [extensions, apps], ["deployments"]),
      rule(["get", "list", "watch"], [apps, extensions], ["replicasets"]),
      rule(["get", "list", "watch"], [legacy], ["replicationcontrollers"]),
      rule(["get", "list", "watch"], ["policy"], ["poddisruptionbudgets"]),
      rule(["get", "list", "watch"], [apps], ["statefulsets"]),
      rule(["update"], ["policy"], ["poddisruptionbudgets/status"]),
      rule(["patch", "update"], [legacy], ["pods/status"]),
      rule(["get"], ["*"], ["*/scale"]),
      eventsRule,
    ],
    // chapter 7: the Endpoints controller writes one Endpoints per Service (endpoints/restricted:
    // the API server's check that it may point them at pod IPs).
    "endpoint-controller": [
      rule(["get", "list", "watch"], [legacy], ["services", "pods"]),
      rule(["get", "list", "watch", "create", "update", "delete"], [legacy], ["endpoints"]),
      rule(["create"], [legacy], ["endpoints/restricted"]),
      eventsRule,
    ],
    // EndpointSlices: services/finalizers so the slices it creates may set blockOwnerDeletion on
    // their owner reference to the Service.
    "endpointslice-controller": [
      rule(["get", "list", "watch"], [legacy], ["services", "pods", "nodes"]),
      rule(["update"], [legacy], ["services/finalizers"]),
      rule(["get", "list", "create", "update", "delete"], ["discovery.k8s.io"], ["endpointslices"]),
      eventsRule,
    ],
    // chapter 7: the node lifecycle controller (and the taint-eviction controller, which runs as
    // this account upstream too) writes node conditions and taints, pods' Ready and deletions.
    "node-controller": [
      rule(["get", "list", "watch", "update", "delete", "patch"], [legacy], ["nodes"]),
      rule(["patch", "update"], [legacy], ["nodes/status"]),
      rule(["patch", "update"], [legacy], ["pods/status"]),
      rule(["list", "delete", "get", "watch"], [legacy], ["pods"]),
      eventsRule,
    ],
    // It only creates the `default` account; it reads namespaces and accounts through the
    // controller-manager's shared informers, which list and watch under the manager's own role.
    "service-account-controller": [rule(["create"], [legacy], ["serviceaccounts"]), eventsRule],
  };
}

export function controllerRoles(): ClusterRole[] {
  return Object.entries(controllerRules()).map(([sa, rules]) =>
    clusterRole(controllerRolePrefix + sa, rules),
  );
}

/** addControllerRole's binding: `system:controller:<sa>` → ServiceAccount kube-system/<sa>. */
export function controllerRoleBindings(): ClusterRoleBinding[] {
  return Object.keys(controllerRules()).map((sa) =>
    binding(controllerRolePrefix + sa, serviceAccount(controllerNamespace, sa)),
  );
}
// #endregion controller-roles
