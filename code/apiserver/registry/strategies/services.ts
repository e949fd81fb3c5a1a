/**
 * Service strategy — the status is the load balancer's; a type change releases what it needed.
 * Upstream: kubernetes pkg/registry/core/service/strategy.go.
 *
 * Solves:
 * - the load-balancer status (external IPs) belongs to the cloud controller: it starts empty
 *   and a user's update cannot set it;
 * - `type: NodePort` → `type: ClusterIP` must give back the node ports the server allocated,
 *   but only if the user did not also edit them (then validation should see the edit):
 *   upstream wipes each type-dependent field only when it no longer applies *and* is unchanged;
 * - a PUT may create a Service (AllowCreateOnUpdate), as `kubectl replace` of a missing one does.
 *
 * Invariants:
 * - after prepareForCreate: status = {loadBalancer: {}}; after prepareForUpdate: status = old
 *   status, except that a Service which is no longer a LoadBalancer has no load-balancer status;
 * - the status strategy keeps the old spec.
 *
 * What upstream does differently: the cluster IP and node ports are allocated (and released)
 * by the Service REST storage around the generic store, from finite pools; this strategy only
 * clears the fields.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/service/strategy.go (svcStrategy, serviceStatusStrategy, dropTypeDependentFields, SelectableFields)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (AddFieldLabelConversionsForService)
 * @chapter 02-apiserver
 */
import type { Service, ServiceSpec } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import {
  baseStrategy,
  keepFromOld,
  objectMetaFieldsSet,
  semanticDeepEqual,
  statusStrategy,
} from "./helpers.ts";
import { validateStatusUpdate } from "./validation.ts";

type Spec = ServiceSpec & { healthCheckNodePort?: number; loadBalancerClass?: string };

// #region drop-type-dependent-fields
const needsClusterIP = (s: Spec) => s.type !== "ExternalName";
const needsNodePort = (s: Spec) => s.type === "NodePort" || s.type === "LoadBalancer";
const needsHCNodePort = (s: Spec) => s.type === "LoadBalancer" && s.externalTrafficPolicy === "Local";
const canSetLoadBalancerClass = (s: Spec) => s.type === "LoadBalancer";
const externallyAccessible = (s: Spec) =>
  s.type === "LoadBalancer" ||
  s.type === "NodePort" ||
  (s.type === "ClusterIP" && (s.externalIPs ?? []).length > 0);

/**
 * On update only: wipe a field the new type does not use, when the old type may have filled it
 * and the user left it as it was. (The server allocated it; the user did not ask for it.)
 */
export function dropTypeDependentFields(svc: Service, old: Service): void {
  svc.spec ??= {};
  const spec: Spec = svc.spec;
  const oldSpec: Spec = old.spec ?? {};
  if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
    if (spec.clusterIP === oldSpec.clusterIP && semanticDeepEqual(spec.clusterIPs, oldSpec.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (semanticDeepEqual(spec.ipFamilies, oldSpec.ipFamilies)) delete spec.ipFamilies;
    if (spec.ipFamilyPolicy === oldSpec.ipFamilyPolicy) delete spec.ipFamilyPolicy;
  }
  const nodePorts = (s: Spec) => (s.ports ?? []).map((p) => p.nodePort ?? 0);
  if (
    needsNodePort(oldSpec) &&
    !needsNodePort(spec) &&
    semanticDeepEqual(nodePorts(spec), nodePorts(oldSpec))
  ) {
    for (const port of spec.ports ?? []) delete port.nodePort;
  }
  if (
    needsHCNodePort(oldSpec) &&
    !needsHCNodePort(spec) &&
    spec.healthCheckNodePort === oldSpec.healthCheckNodePort
  ) {
    delete spec.healthCheckNodePort;
  }
  if (oldSpec.type === "LoadBalancer" && spec.type !== "LoadBalancer") {
    if (
      spec.allocateLoadBalancerNodePorts !== undefined &&
      spec.allocateLoadBalancerNodePorts === oldSpec.allocateLoadBalancerNodePorts
    ) {
      delete spec.allocateLoadBalancerNodePorts;
    }
  }
  if (canSetLoadBalancerClass(oldSpec) && !canSetLoadBalancerClass(spec)) {
    if (spec.loadBalancerClass === oldSpec.loadBalancerClass) delete spec.loadBalancerClass;
  }
  if (externallyAccessible(oldSpec) && !externallyAccessible(spec)) {
    if (spec.externalTrafficPolicy === oldSpec.externalTrafficPolicy) delete spec.externalTrafficPolicy;
  }
  // Load-balancer teardown is asynchronous, but users need not see that.
  if (spec.type !== "LoadBalancer") {
    svc.status ??= {};
    svc.status.loadBalancer = {};
  }
}
// #endregion drop-type-dependent-fields

export function serviceSelectableFields(obj: KubeObject): Record<string, string> {
  const spec = (obj as Service).spec;
  return {
    ...objectMetaFieldsSet(obj, true),
    "spec.clusterIP": spec?.clusterIP ?? "",
    "spec.type": spec?.type ?? "",
  };
}

export const serviceStrategy: RESTStrategy = {
  ...baseStrategy(true),
  prepareForCreate(obj) {
    // Upstream's empty ServiceStatus serializes as `{loadBalancer: {}}` (a struct is never omitted).
    obj.status = { loadBalancer: {} };
  },
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "status");
    dropTypeDependentFields(obj as Service, old as Service);
  },
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  selectableFields: serviceSelectableFields,
  fieldLabels: ["metadata.namespace", "metadata.name", "spec.clusterIP", "spec.type"],
};

serviceStrategy.status = statusStrategy(serviceStrategy, {
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "spec");
  },
  validateUpdate: validateStatusUpdate,
});
