/**
 * Validation by kind — the one entry point the API server's registry calls: "is this object
 * (or this change to it) acceptable?", answered with every problem at once.
 * Upstream: each resource's strategy (pkg/registry/<group>/<resource>/strategy.go) calls its
 * Validate* functions in pkg/apis/<group>/validation; here one table does it for every kind.
 *
 * Solves:
 * - the registry is generic over resources; this file maps (apiVersion, kind) to the kind's
 *   rules so that a strategy need not know them;
 * - create, update and status-update are different questions: a pod may not change its spec
 *   on update, and the kubelet's status write must not be judged by the spec rules.
 *
 * Invariants:
 * - an unknown kind yields no errors (nothing to check), never an exception;
 * - every function runs on a defaulted object (defaults.ts) and never modifies it.
 *
 * The per-kind functions live in the `*-validation.ts` files beside this one (pod-validation.ts
 * and the files for a pod's parts, pod-update-validation.ts, core-, apps-, coordination- and
 * scheduling-validation.ts, object-meta-validation.ts for what every kind shares) and are
 * re-exported here.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/strategy.go (podStrategy.Validate, ValidateUpdate; podStatusStrategy.ValidateUpdate)
 * @upstream kubernetes/kubernetes pkg/registry/apps/deployment/strategy.go (deploymentStrategy.Validate, ValidateUpdate)
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (the Validate* functions each strategy calls)
 * @chapter 02-apiserver
 */

import {
  validateMutatingWebhookConfiguration,
  validateMutatingWebhookConfigurationUpdate,
  validateValidatingWebhookConfiguration,
  validateValidatingWebhookConfigurationUpdate,
} from "./admissionregistration-validation.ts";
import {
  validateDeployment,
  validateDeploymentStatusUpdate,
  validateDeploymentUpdate,
  validateReplicaSet,
  validateReplicaSetStatusUpdate,
  validateReplicaSetUpdate,
  validateScale,
} from "./apps-validation.ts";
import { validateLease, validateLeaseUpdate } from "./coordination-validation.ts";
import {
  validateConfigMap,
  validateConfigMapUpdate,
  validateEndpoints,
  validateEndpointsUpdate,
  validateEvent,
  validateEventUpdate,
  validateNamespace,
  validateNamespaceStatusUpdate,
  validateNamespaceUpdate,
  validateNode,
  validateNodeUpdate,
  validateSecret,
  validateSecretUpdate,
  validateService,
  validateServiceAccount,
  validateServiceAccountUpdate,
  validateServiceUpdate,
} from "./core-validation.ts";
import { validateEndpointSlice, validateEndpointSliceUpdate } from "./discovery-validation.ts"; // EndpointSlices
import type { FieldError } from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import { validateObjectMetaUpdate } from "./object-meta-validation.ts";
import { validatePodBinding, validatePodStatusUpdate, validatePodUpdate } from "./pod-update-validation.ts";
import { validatePod } from "./pod-validation.ts";
// chapter 5: PodDisruptionBudgets
import {
  validatePodDisruptionBudget,
  validatePodDisruptionBudgetStatusUpdate,
  validatePodDisruptionBudgetUpdate,
} from "./policy-validation.ts";
import {
  validateLimitRange,
  validateLimitRangeUpdate,
  validateResourceQuota,
  validateResourceQuotaStatusUpdate,
  validateResourceQuotaUpdate,
} from "./quota-validation.ts";
import {
  validateClusterRole,
  validateClusterRoleBinding,
  validateClusterRoleBindingUpdate,
  validateClusterRoleUpdate,
  validateRole,
  validateRoleBinding,
  validateRoleBindingUpdate,
  validateRoleUpdate,
} from "./rbac-validation.ts";
import { validatePriorityClass, validatePriorityClassUpdate } from "./scheduling-validation.ts";

export * from "./admissionregistration-validation.ts";
export * from "./affinity-validation.ts";
export * from "./apps-validation.ts";
export * from "./container-validation.ts";
export * from "./coordination-validation.ts";
export * from "./core-validation.ts";
export * from "./discovery-validation.ts"; // EndpointSlices
export * from "./env-validation.ts";
export * from "./object-meta-validation.ts";
export * from "./pod-update-validation.ts";
export * from "./pod-validation.ts";
export * from "./policy-validation.ts"; // chapter 5: PodDisruptionBudgets
export * from "./probe-validation.ts";
export * from "./resource-validation.ts";
export * from "./scheduling-validation.ts";
export * from "./toleration-validation.ts";
export * from "./volume-validation.ts";

type Validate = (object: KubeObject) => FieldError[];
type ValidateUpdate = (object: KubeObject, old: KubeObject) => FieldError[];

interface KindRules {
  create: Validate;
  update: ValidateUpdate;
  /** The status subresource's rules; absent means "metadata rules only". */
  status?: ValidateUpdate;
}

// #region kind-rules
// One row per kind: its create, update and status-subresource rules. Binding and Scale are bodies
// sent to a subresource, with no old object of their own to compare: an update checks the new one.
const rules: Record<string, KindRules> = {
  "v1/Namespace": {
    create: validateNamespace,
    update: validateNamespaceUpdate,
    status: validateNamespaceStatusUpdate,
  },
  "v1/Pod": { create: validatePod, update: validatePodUpdate, status: validatePodStatusUpdate },
  "v1/Binding": { create: validatePodBinding, update: (o) => validatePodBinding(o) },
  // A node's status is validated by the same rules as its spec (upstream: ValidateNodeUpdate for both).
  "v1/Node": { create: validateNode, update: validateNodeUpdate, status: validateNodeUpdate },
  "v1/Event": { create: validateEvent, update: validateEventUpdate },
  "v1/ConfigMap": { create: validateConfigMap, update: validateConfigMapUpdate },
  "v1/Secret": { create: validateSecret, update: validateSecretUpdate },
  "v1/ServiceAccount": { create: validateServiceAccount, update: validateServiceAccountUpdate },
  "v1/Service": { create: validateService, update: validateServiceUpdate },
  "v1/Endpoints": { create: validateEndpoints, update: validateEndpointsUpdate },
  "discovery.k8s.io/v1/EndpointSlice": { create: validateEndpointSlice, update: validateEndpointSliceUpdate },
  "apps/v1/ReplicaSet": {
    create: validateReplicaSet,
    update: validateReplicaSetUpdate,
    status: validateReplicaSetStatusUpdate,
  },
  "apps/v1/Deployment": {
    create: validateDeployment,
    update: validateDeploymentUpdate,
    status: validateDeploymentStatusUpdate,
  },
  "autoscaling/v1/Scale": { create: validateScale, update: (o) => validateScale(o) },
  "coordination.k8s.io/v1/Lease": { create: validateLease, update: validateLeaseUpdate },
  "scheduling.k8s.io/v1/PriorityClass": {
    create: validatePriorityClass,
    update: validatePriorityClassUpdate,
  },
  // chapter 3: RBAC
  "rbac.authorization.k8s.io/v1/Role": { create: validateRole, update: validateRoleUpdate },
  "rbac.authorization.k8s.io/v1/ClusterRole": {
    create: validateClusterRole,
    update: validateClusterRoleUpdate,
  },
  "rbac.authorization.k8s.io/v1/RoleBinding": {
    create: validateRoleBinding,
    update: validateRoleBindingUpdate,
  },
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": {
    create: validateClusterRoleBinding,
    update: validateClusterRoleBindingUpdate,
  },
  // chapter 3: webhooks
  "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration": {
    create: validateMutatingWebhookConfiguration,
    update: validateMutatingWebhookConfigurationUpdate,
  },
  "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": {
    create: validateValidatingWebhookConfiguration,
    update: validateValidatingWebhookConfigurationUpdate,
  },
  // chapter 3: admission
  "v1/LimitRange": { create: validateLimitRange, update: validateLimitRangeUpdate },
  "v1/ResourceQuota": {
    create: validateResourceQuota,
    update: validateResourceQuotaUpdate,
    status: validateResourceQuotaStatusUpdate,
  },
  // chapter 5: PodDisruptionBudgets
  "policy/v1/PodDisruptionBudget": {
    create: validatePodDisruptionBudget,
    update: validatePodDisruptionBudgetUpdate,
    status: validatePodDisruptionBudgetStatusUpdate,
  },
};

function rulesFor(object: KubeObject): KindRules | undefined {
  return rules[`${object.apiVersion}/${object.kind}`];
}

/** Validate on create: the kind's rules for a new (defaulted) object. */
export function validateObject(object: KubeObject): FieldError[] {
  return rulesFor(object)?.create(object) ?? [];
}

/** Validate on update: the kind's rules for the new object, plus what may not change since `old`. */
export function validateObjectUpdate(object: KubeObject, old: KubeObject): FieldError[] {
  return rulesFor(object)?.update(object, old) ?? [];
}

/**
 * Validate a write to the `status` subresource (the strategy has already put the old spec
 * back). Kinds without status rules get the metadata update rules only, as upstream's
 * ValidateServiceStatusUpdate and friends do (load-balancer status is not validated here).
 */
export function validateObjectStatusUpdate(object: KubeObject, old: KubeObject): FieldError[] {
  const kindRules = rulesFor(object);
  if (!kindRules) return [];
  return kindRules.status
    ? kindRules.status(object, old)
    : validateObjectMetaUpdate(object.metadata, old.metadata);
}
// #endregion kind-rules
