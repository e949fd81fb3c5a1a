/**
 * The bootstrap policy against upstream. The tables below are transcribed by hand from
 * kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/cluster-roles.yaml
 * (the golden file upstream's policy_test.go regenerates from ClusterRoles()), from
 * controller_policy.go (buildControllerRoles) for the controllers, and from policy.go
 * (ClusterRoleBindings) for the bindings — only the roles the course implements. A rule is
 * written `verbs : groups : resources` (or `verbs : url : paths`), each list sorted as the golden
 * file sorts it, `core` for the "" group, then `: names …` when it has resourceNames. If a rule
 * here changes, a role drifted from upstream: fix the code, not the table, unless upstream moved.
 */
import { describe, expect, it } from "vitest";
import type { PolicyRule } from "../../../api/rbac.ts";
import { nodeRules } from "../node/node-rules.ts";
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from "./bootstrap-policy.ts";
import { controllerRoleBindings, controllerRoles } from "./controller-policy.ts";

const events = "create patch update : core events.k8s.io : events";
const write = "create delete deletecollection patch update";
const readWrite = "create delete deletecollection get list patch update watch";

const upstreamRoles: Record<string, string[]> = {
  "cluster-admin": ["* : * : *", "* : url : *"],
  "system:discovery": [
    "get : url : /api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/",
  ],
  "system:monitoring": [
    "get : url : /healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*",
  ],
  "system:basic-user": [
    "create : authorization.k8s.io : selfsubjectaccessreviews selfsubjectrulesreviews",
    "create : authentication.k8s.io : selfsubjectreviews",
  ],
  "system:public-info-viewer": ["get : url : /healthz /livez /readyz /version /version/"],
  admin: [],
  edit: [],
  view: [],
  "system:aggregate-to-admin": [
    "create : authorization.k8s.io : localsubjectaccessreviews",
    `${readWrite} : rbac.authorization.k8s.io : rolebindings roles`,
  ],
  "system:aggregate-to-edit": [
    "get list watch : core : pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy",
    "impersonate : core : serviceaccounts",
    `${write} : core : pods pods/attach pods/exec pods/portforward pods/proxy`,
    "create : core : pods/eviction",
    `${write} : core : configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets serviceaccounts services services/proxy`,
    "create : core : serviceaccounts/token",
    `${write} : apps : daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale statefulsets statefulsets/scale`,
    `${write} : autoscaling : horizontalpodautoscalers`,
    `${write} : batch : cronjobs jobs`,
    `${write} : extensions : daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets replicasets/scale replicationcontrollers/scale`,
    `${write} : policy : poddisruptionbudgets`,
    `${write} : networking.k8s.io : ingresses networkpolicies`,
    `${readWrite} : coordination.k8s.io : leases`,
  ],
  "system:aggregate-to-view": [
    "get list watch : core : configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status",
    "get list watch : core : bindings events limitranges namespaces/status pods/log pods/status replicationcontrollers/status resourcequotas resourcequotas/status",
    "get list watch : core : namespaces",
    "get list watch : discovery.k8s.io : endpointslices",
    "get list watch : apps : controllerrevisions daemonsets daemonsets/status deployments deployments/scale deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale statefulsets/status",
    "get list watch : autoscaling : horizontalpodautoscalers horizontalpodautoscalers/status",
    "get list watch : batch : cronjobs cronjobs/status jobs jobs/status",
    "get list watch : extensions : daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status replicationcontrollers/scale",
    "get list watch : policy : poddisruptionbudgets poddisruptionbudgets/status",
    "get list watch : networking.k8s.io : ingresses ingresses/status networkpolicies",
  ],
  "system:kube-scheduler": [
    events,
    "create : coordination.k8s.io : leases",
    "get update : coordination.k8s.io : leases : names kube-scheduler",
    "get list watch : core : nodes",
    "delete get list watch : core : pods",
    "create : core : bindings pods/binding",
    "patch update : core : pods/status",
    "get list watch : core : replicationcontrollers services",
    "get list watch : apps extensions : replicasets",
    "get list watch : apps : statefulsets",
    "get list watch : policy : poddisruptionbudgets",
    "get list watch : core : persistentvolumeclaims persistentvolumes",
    "create : authentication.k8s.io : tokenreviews",
    "create : authorization.k8s.io : subjectaccessreviews",
    "get list watch : storage.k8s.io : csinodes",
    "get list watch : core : namespaces",
    "get list watch : storage.k8s.io : csidrivers",
    "get list watch : storage.k8s.io : csistoragecapacities",
  ],
  "system:kube-controller-manager": [
    events,
    "create : coordination.k8s.io : leases",
    "get update : coordination.k8s.io : leases : names kube-controller-manager",
    "create : core : secrets serviceaccounts",
    "delete : core : secrets",
    "get : core : configmaps namespaces secrets serviceaccounts",
    "update : core : secrets serviceaccounts",
    "create : authentication.k8s.io : tokenreviews",
    "create : authorization.k8s.io : subjectaccessreviews",
    "list watch : * : *",
    "create : core : serviceaccounts/token",
  ],
  // NodeRules() with v1.32's default feature gates (no DRA, no ClusterTrustBundle rules).
  "system:node": [
    "create : authentication.k8s.io : tokenreviews",
    "create : authorization.k8s.io : localsubjectaccessreviews subjectaccessreviews",
    "get list watch : core : services",
    "create get list watch : core : nodes",
    "patch update : core : nodes/status",
    "patch update : core : nodes",
    "create patch update : core : events",
    "get list watch : core : pods",
    "create delete : core : pods",
    "patch update : core : pods/status",
    "create : core : pods/eviction",
    "get list watch : core : configmaps secrets",
    "get : core : persistentvolumeclaims persistentvolumes",
    "get : core : endpoints",
    "create get list watch : certificates.k8s.io : certificatesigningrequests",
    "create delete get patch update : coordination.k8s.io : leases",
    "get : storage.k8s.io : volumeattachments",
    "create : core : serviceaccounts/token",
    "get patch update : core : persistentvolumeclaims/status",
    "get list watch : storage.k8s.io : csidrivers",
    "create delete get patch update : storage.k8s.io : csinodes",
    "get list watch : node.k8s.io : runtimeclasses",
  ],
  "system:controller:deployment-controller": [
    "get list update watch : apps extensions : deployments",
    "update : apps extensions : deployments/status",
    "update : apps extensions : deployments/finalizers",
    "create delete get list patch update watch : apps extensions : replicasets",
    "get list update watch : core : pods",
    events,
  ],
  "system:controller:generic-garbage-collector": ["delete get list patch update watch : * : *", events],
  "system:controller:namespace-controller": [
    "delete get list watch : core : namespaces",
    "update : core : namespaces/finalize namespaces/status",
    "delete deletecollection get list watch : * : *",
  ],
  "system:controller:replicaset-controller": [
    "get list update watch : apps extensions : replicasets",
    "update : apps extensions : replicasets/status",
    "update : apps extensions : replicasets/finalizers",
    "create delete list patch watch : core : pods",
    events,
  ],
  // resource quota controller
  "system:controller:resourcequota-controller": [
    "list watch : * : *",
    "update : core : resourcequotas/status",
    events,
  ],
  "system:controller:service-account-controller": ["create : core : serviceaccounts", events],
  // chapter 5: PodDisruptionBudgets
  "system:controller:disruption-controller": [
    "get list watch : apps extensions : deployments",
    "get list watch : apps extensions : replicasets",
    "get list watch : core : replicationcontrollers",
    "get list watch : policy : poddisruptionbudgets",
    "get list watch : apps : statefulsets",
    "update : policy : poddisruptionbudgets/status",
    "patch update : core : pods/status",
    "get : * : */scale",
    events,
  ],
  // chapter 7
  "system:controller:endpoint-controller": [
    "get list watch : core : pods services",
    "create delete get list update watch : core : endpoints",
    "create : core : endpoints/restricted",
    events,
  ],
  // EndpointSlices
  "system:controller:endpointslice-controller": [
    "get list watch : core : nodes pods services",
    "update : core : services/finalizers",
    "create delete get list update : discovery.k8s.io : endpointslices",
    events,
  ],
  "system:controller:node-controller": [
    "delete get list patch update watch : core : nodes",
    "patch update : core : nodes/status",
    "patch update : core : pods/status",
    "delete get list watch : core : pods",
    events,
  ],
};

/** Who each binding names: `Kind name`, `ServiceAccount namespace/name`; none for system:node. */
const upstreamBindings: Record<string, string[]> = {
  "cluster-admin": ["Group system:masters"],
  "system:monitoring": ["Group system:monitoring"],
  "system:discovery": ["Group system:authenticated"],
  "system:basic-user": ["Group system:authenticated"],
  "system:public-info-viewer": ["Group system:authenticated", "Group system:unauthenticated"],
  "system:kube-controller-manager": ["User system:kube-controller-manager"],
  "system:kube-scheduler": ["User system:kube-scheduler"],
  "system:node": [],
  "system:controller:deployment-controller": ["ServiceAccount kube-system/deployment-controller"],
  "system:controller:generic-garbage-collector": ["ServiceAccount kube-system/generic-garbage-collector"],
  "system:controller:namespace-controller": ["ServiceAccount kube-system/namespace-controller"],
  "system:controller:replicaset-controller": ["ServiceAccount kube-system/replicaset-controller"],
  "system:controller:resourcequota-controller": ["ServiceAccount kube-system/resourcequota-controller"],
  "system:controller:service-account-controller": ["ServiceAccount kube-system/service-account-controller"],
  // chapter 5: PodDisruptionBudgets
  "system:controller:disruption-controller": ["ServiceAccount kube-system/disruption-controller"],
  // chapter 7 (the taint-eviction controller runs as node-controller, as upstream's)
  "system:controller:endpoint-controller": ["ServiceAccount kube-system/endpoint-controller"],
  "system:controller:endpointslice-controller": ["ServiceAccount kube-system/endpointslice-controller"],
  "system:controller:node-controller": ["ServiceAccount kube-system/node-controller"],
};

const sorted = (xs: string[] = []) => [...xs].sort().join(" ");
function written(r: PolicyRule): string {
  if (r.nonResourceURLs?.length) return `${sorted(r.verbs)} : url : ${sorted(r.nonResourceURLs)}`;
  const groups = sorted((r.apiGroups ?? []).map((g) => g || "core"));
  const names = r.resourceNames?.length ? ` : names ${sorted(r.resourceNames)}` : "";
  return `${sorted(r.verbs)} : ${groups} : ${sorted(r.resources)}${names}`;
}

const ours = [...bootstrapClusterRoles(), ...controllerRoles()];
const ourBindings = [...bootstrapClusterRoleBindings(), ...controllerRoleBindings()];

describe("the bootstrap policy matches upstream v1.32", () => {
  it("has exactly the roles of the table, each with upstream's rules in upstream's order", () => {
    expect(ours.map((r) => r.metadata.name).sort()).toEqual(Object.keys(upstreamRoles).sort());
    for (const role of ours) {
      expect({ [role.metadata.name as string]: (role.rules ?? []).map(written) }).toEqual({
        [role.metadata.name as string]: upstreamRoles[role.metadata.name as string],
      });
    }
  });

  it("gives the Node authorizer the same static rules as the system:node role", () => {
    expect(nodeRules().map(written)).toEqual(upstreamRoles["system:node"]);
  });

  it("binds each role to upstream's subjects, the controllers to their kube-system accounts", () => {
    expect(ourBindings.map((b) => b.metadata.name).sort()).toEqual(Object.keys(upstreamBindings).sort());
    for (const b of ourBindings) {
      expect(b.roleRef).toEqual({
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: b.metadata.name,
      });
      const subjects = (b.subjects ?? []).map((s) =>
        s.kind === "ServiceAccount"
          ? `${s.kind} ${s.namespace}/${s.name}${s.apiGroup ? " (apiGroup set)" : ""}`
          : `${s.kind} ${s.name}${s.apiGroup === "rbac.authorization.k8s.io" ? "" : " (no apiGroup)"}`,
      );
      expect({ [b.metadata.name as string]: subjects }).toEqual({
        [b.metadata.name as string]: upstreamBindings[b.metadata.name as string],
      });
    }
  });

  it("labels every role and binding rbac-defaults, with autoupdate on", () => {
    for (const o of [...ours, ...ourBindings]) {
      expect(o.metadata.labels?.["kubernetes.io/bootstrapping"]).toBe("rbac-defaults");
      expect(o.metadata.annotations?.["rbac.authorization.kubernetes.io/autoupdate"]).toBe("true");
    }
  });

  it("aggregates as upstream: admin ← edit ← view, each selecting aggregate-to-<name>", () => {
    const byName = (n: string) => ours.find((r) => r.metadata.name === n);
    for (const [name, labelledInto] of [
      ["admin", undefined],
      ["edit", "admin"],
      ["view", "edit"],
    ] as const) {
      const role = byName(name);
      expect(role?.aggregationRule?.clusterRoleSelectors).toEqual([
        { matchLabels: { [`rbac.authorization.k8s.io/aggregate-to-${name}`]: "true" } },
      ]);
      expect(byName(`system:aggregate-to-${name}`)?.metadata.labels).toHaveProperty(
        [`rbac.authorization.k8s.io/aggregate-to-${name}`],
        "true",
      );
      if (labelledInto)
        expect(role?.metadata.labels?.[`rbac.authorization.k8s.io/aggregate-to-${labelledInto}`]).toBe(
          "true",
        );
    }
  });
});
