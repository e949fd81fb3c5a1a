/**
 * Namespace strategy — born Active with the `kubernetes` finalizer, labelled with its own name.
 * Upstream: kubernetes pkg/registry/core/namespace/strategy.go.
 *
 * Solves:
 * - deleting a namespace must first delete everything in it: the `kubernetes` finalizer in
 *   `spec.finalizers` keeps the namespace (phase Terminating) until the namespace controller
 *   has emptied it and removed the finalizer through the `finalize` subresource;
 * - so that finalizer must be there from the start, whatever the client sent, and a plain
 *   update must not be able to remove it (only `/finalize` may);
 * - network policies and admission need to select namespaces by name, which a label selector
 *   cannot do — unless every namespace carries `kubernetes.io/metadata.name=<its name>`.
 *
 * Invariants:
 * - after prepareForCreate: status = {phase: "Active"}; spec.finalizers contains "kubernetes";
 * - prepareForUpdate keeps the old spec.finalizers and status; the status strategy keeps the
 *   old spec; the finalize strategy keeps the old status (and is the one way to change
 *   spec.finalizers);
 * - after canonicalize: labels["kubernetes.io/metadata.name"] = metadata.name.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/namespace/strategy.go (namespaceStrategy, namespaceStatusStrategy, namespaceFinalizeStrategy, Canonicalize, NamespaceToSelectableFields)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (AddFieldLabelConversionsForNamespace)
 * @chapter 02-apiserver
 */
import type { Namespace } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, keepFromOld, objectMetaFieldsSet, statusStrategy } from "./helpers.ts";
import { validateNamespaceFinalizeUpdate, validateStatusUpdate } from "./validation.ts";

export const finalizerKubernetes = "kubernetes";
export const labelMetadataName = "kubernetes.io/metadata.name";

// #region namespace-strategy
function prepareForCreate(obj: KubeObject): void {
  const ns = obj as Namespace;
  ns.status = { phase: "Active" };
  // Required on create; not a default, because the namespace controller removes it later.
  ns.spec ??= {};
  const finalizers = ns.spec.finalizers ?? [];
  if (!finalizers.includes(finalizerKubernetes)) finalizers.push(finalizerKubernetes);
  ns.spec.finalizers = finalizers;
}

function prepareForUpdate(obj: KubeObject, old: KubeObject): void {
  const ns = obj as Namespace;
  const oldNs = old as Namespace;
  // Only /finalize may change the finalizers; only /status the status.
  if (oldNs.spec?.finalizers === undefined) {
    if (ns.spec) delete ns.spec.finalizers;
  } else {
    ns.spec ??= {};
    ns.spec.finalizers = [...oldNs.spec.finalizers];
  }
  keepFromOld(obj, old, "status");
}

/**
 * After validation, on create and update: defaulting cannot set the label on create, because a
 * namespace made with generateName has no name yet when defaults run.
 */
function canonicalize(obj: KubeObject): void {
  obj.metadata.labels = { ...obj.metadata.labels, [labelMetadataName]: obj.metadata.name ?? "" };
}

export function namespaceSelectableFields(obj: KubeObject): Record<string, string> {
  return {
    ...objectMetaFieldsSet(obj, false),
    "status.phase": (obj as Namespace).status?.phase ?? "",
    // A bug upstream keeps for backward compatibility ("name" besides "metadata.name").
    name: obj.metadata?.name ?? "",
  };
}

export const namespaceStrategy: RESTStrategy = {
  ...baseStrategy(false),
  prepareForCreate,
  prepareForUpdate,
  canonicalize,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  selectableFields: namespaceSelectableFields,
  fieldLabels: ["status.phase", "metadata.name"],
};

namespaceStrategy.status = statusStrategy(namespaceStrategy, {
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "spec");
  },
  validateUpdate: validateStatusUpdate,
});

/**
 * The `finalize` subresource: the namespace controller removes `kubernetes` from spec.finalizers
 * here. Only the status is the stored one's; the rest of the body is written (upstream's
 * namespaceFinalizeStrategy resets the status alone).
 */
export const namespaceFinalizeStrategy: RESTStrategy = statusStrategy(namespaceStrategy, {
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "status");
  },
  validateUpdate: validateNamespaceFinalizeUpdate,
});
// #endregion namespace-strategy
