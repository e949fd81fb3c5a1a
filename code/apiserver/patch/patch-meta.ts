/**
 * Patch metadata — which lists a strategic merge patch merges by key, and which it replaces: for
 * each list in the kinds we serve, merged item by item by a key, unioned as a set, or replaced
 * whole. Upstream reads the same facts from the Go struct tags of k8s.io/api's types.go files,
 * through apimachinery's strategicpatch/meta.go.
 *
 * Solves:
 * - a list in JSON has no identity for its items; `containers` does (the `name`), `ports` of a
 *   container do (`containerPort`), `finalizers` are a set of strings. Go says so in tags
 *   (`patchStrategy:"merge" patchMergeKey:"name"`) that strategicpatch reads by reflection;
 *   TypeScript types vanish at run time, so we write the same facts down as data;
 * - `retainKeys` marks a union (a Volume has exactly one source; a Deployment strategy is
 *   Recreate or RollingUpdate): a patch that carries `$retainKeys` clears the members it does not
 *   name, so switching the source does not leave the old one behind.
 *
 * Invariants:
 * - strategies and merge keys are copied from the v1.32 struct tags (checked against the tags
 *   compiled into kubectl v1.32.5): a list not in this table has no strategy and is atomic;
 * - the table lists every path that leads to a tagged list; untagged fields on the way are
 *   present only to carry the walk (`type`), a field we do not list is an untagged field;
 * - ObjectMeta is shared by every kind and by every embedded template.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/types.go (PodSpec, Container, EphemeralContainerCommon, PodStatus, NodeSpec, NodeStatus, NamespaceStatus, ServiceSpec, ServiceStatus, ServiceAccount, Volume)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/apps/v1/types.go (DeploymentSpec, DeploymentStatus, ReplicaSetStatus)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go (ObjectMeta)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/meta.go (PatchMetaFromStruct, LookupPatchMetadataForStruct, LookupPatchMetadataForSlice)
 * @chapter 02-apiserver
 */

// #region patch-meta
/** The values of a `patchStrategy` struct tag. */
export type PatchStrategy = "merge" | "replace" | "retainKeys" | "merge,retainKeys";

/** One field of a struct: its tags, and (for a struct or list of structs) the element's fields. */
export interface FieldMeta {
  patchStrategy?: PatchStrategy;
  /** For a merged list of objects: the field that identifies an item. */
  patchMergeKey?: string;
  /** The struct this field holds (or the list's element struct). */
  type?: StructMeta;
}

/** A Go struct, by name, with the fields whose metadata matters. */
export interface StructMeta {
  name: string;
  fields: Record<string, FieldMeta>;
}
// #endregion patch-meta

const struct = (name: string, fields: Record<string, FieldMeta>): StructMeta => ({ name, fields });
const mergeBy = (patchMergeKey: string, type?: StructMeta): FieldMeta =>
  type ? { patchStrategy: "merge", patchMergeKey, type } : { patchStrategy: "merge", patchMergeKey };
const conditions: FieldMeta = mergeBy("type");

// #region table
export const objectMeta = struct("ObjectMeta", {
  ownerReferences: mergeBy("uid"),
  finalizers: { patchStrategy: "merge" },
});

const container = struct("Container", {
  ports: mergeBy("containerPort"),
  env: mergeBy("name"),
  volumeMounts: mergeBy("mountPath"),
  volumeDevices: mergeBy("devicePath"),
});

/** EphemeralContainer inlines EphemeralContainerCommon, whose tags are Container's. */
const ephemeralContainer = struct("EphemeralContainer", container.fields);

const volume = struct("Volume", {
  ephemeral: {
    type: struct("EphemeralVolumeSource", {
      volumeClaimTemplate: {
        type: struct("PersistentVolumeClaimTemplate", { metadata: { type: objectMeta } }),
      },
    }),
  },
});

export const podSpec = struct("PodSpec", {
  volumes: { patchStrategy: "merge,retainKeys", patchMergeKey: "name", type: volume },
  initContainers: mergeBy("name", container),
  containers: mergeBy("name", container),
  ephemeralContainers: mergeBy("name", ephemeralContainer),
  imagePullSecrets: mergeBy("name"),
  hostAliases: mergeBy("ip"),
  topologySpreadConstraints: mergeBy("topologyKey"),
  schedulingGates: mergeBy("name"),
  resourceClaims: { patchStrategy: "merge,retainKeys", patchMergeKey: "name" },
});

const podStatus = struct("PodStatus", {
  conditions,
  podIPs: mergeBy("ip"),
  hostIPs: mergeBy("ip"),
  resourceClaimStatuses: { patchStrategy: "merge,retainKeys", patchMergeKey: "name" },
});

const podTemplateSpec = struct("PodTemplateSpec", {
  metadata: { type: objectMeta },
  spec: { type: podSpec },
});

/** A top-level kind: metadata plus the given fields. */
const kind = (name: string, fields: Record<string, FieldMeta> = {}): StructMeta =>
  struct(name, { metadata: { type: objectMeta }, ...fields });

/** Every kind the API server serves, by `apiVersion` then `kind`. */
export const patchMetaByKind: Readonly<Record<string, Readonly<Record<string, StructMeta>>>> = {
  v1: {
    Pod: kind("Pod", { spec: { type: podSpec }, status: { type: podStatus } }),
    Node: kind("Node", {
      spec: { type: struct("NodeSpec", { podCIDRs: { patchStrategy: "merge" } }) },
      status: { type: struct("NodeStatus", { conditions, addresses: mergeBy("type") }) },
    }),
    Namespace: kind("Namespace", { status: { type: struct("NamespaceStatus", { conditions }) } }),
    Service: kind("Service", {
      spec: { type: struct("ServiceSpec", { ports: mergeBy("port") }) },
      status: { type: struct("ServiceStatus", { conditions }) },
    }),
    ServiceAccount: kind("ServiceAccount", { secrets: mergeBy("name") }),
    ConfigMap: kind("ConfigMap"),
    Secret: kind("Secret"),
    Endpoints: kind("Endpoints"),
    Event: kind("Event"),
    Binding: kind("Binding"),
    PodTemplate: kind("PodTemplate", { template: { type: podTemplateSpec } }),
    // chapter 3: admission — no patch strategies beyond metadata's.
    LimitRange: kind("LimitRange"),
    ResourceQuota: kind("ResourceQuota"),
  },
  "apps/v1": {
    Deployment: kind("Deployment", {
      spec: {
        type: struct("DeploymentSpec", {
          template: { type: podTemplateSpec },
          strategy: { patchStrategy: "retainKeys" },
        }),
      },
      status: { type: struct("DeploymentStatus", { conditions }) },
    }),
    ReplicaSet: kind("ReplicaSet", {
      spec: { type: struct("ReplicaSetSpec", { template: { type: podTemplateSpec } }) },
      status: { type: struct("ReplicaSetStatus", { conditions }) },
    }),
  },
  "coordination.k8s.io/v1": { Lease: kind("Lease") },
  "scheduling.k8s.io/v1": { PriorityClass: kind("PriorityClass") },
  "autoscaling/v1": { Scale: kind("Scale") },
  // chapter 3: RBAC (no patch strategies: rules and subjects are replaced whole, as upstream's)
  "rbac.authorization.k8s.io/v1": {
    Role: kind("Role"),
    ClusterRole: kind("ClusterRole"),
    RoleBinding: kind("RoleBinding"),
    ClusterRoleBinding: kind("ClusterRoleBinding"),
  },
  // chapter 3: webhooks
  "admissionregistration.k8s.io/v1": {
    MutatingWebhookConfiguration: kind("MutatingWebhookConfiguration", {
      webhooks: mergeBy("name", struct("MutatingWebhook", { matchConditions: mergeBy("name") })),
    }),
    ValidatingWebhookConfiguration: kind("ValidatingWebhookConfiguration", {
      webhooks: mergeBy("name", struct("ValidatingWebhook", { matchConditions: mergeBy("name") })),
    }),
    // chapter 3: ValidatingAdmissionPolicy
    ValidatingAdmissionPolicy: kind("ValidatingAdmissionPolicy", {
      spec: { type: struct("ValidatingAdmissionPolicySpec", { matchConditions: mergeBy("name") }) },
      status: { type: struct("ValidatingAdmissionPolicyStatus", { conditions }) },
    }),
    ValidatingAdmissionPolicyBinding: kind("ValidatingAdmissionPolicyBinding"),
  },
  // chapter 5: PodDisruptionBudgets — a patch replaces the selector whole (patchStrategy=replace).
  "policy/v1": {
    PodDisruptionBudget: kind("PodDisruptionBudget", {
      spec: { type: struct("PodDisruptionBudgetSpec", { selector: { patchStrategy: "replace" } }) },
      status: { type: struct("PodDisruptionBudgetStatus", { conditions }) },
    }),
  },
  // EndpointSlices: endpoints and ports are atomic lists (+listType=atomic), replaced whole.
  "discovery.k8s.io/v1": {
    EndpointSlice: kind("EndpointSlice"),
  },
};
// #endregion table

/** The struct describing objects of this kind, or undefined for a kind we do not know. */
export function lookupKind(apiVersion: string, kindName: string): StructMeta | undefined {
  return patchMetaByKind[apiVersion]?.[kindName];
}

// #region lookup
/**
 * LookupPatchMetadata: the field's tags and its element struct. A field we do not list is an
 * untagged field (no strategy, nothing below it is tagged either).
 */
export function lookupField(t: StructMeta | undefined, field: string): FieldMeta {
  return (t && Object.hasOwn(t.fields, field) ? t.fields[field] : undefined) ?? {};
}

/**
 * extractRetainKeysPatchStrategy: split "merge,retainKeys" into (retainKeys?, the other strategy).
 */
export function splitStrategy(s: PatchStrategy | undefined): { retainKeys: boolean; strategy: string } {
  if (!s) return { retainKeys: false, strategy: "" };
  const parts = s.split(",");
  const retainKeys = parts.includes("retainKeys");
  return { retainKeys, strategy: parts.find((p) => p !== "retainKeys") ?? "" };
}
// #endregion lookup
