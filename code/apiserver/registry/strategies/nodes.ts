/**
 * Node strategy — a Node is created by its own kubelet, status and all.
 * Upstream: kubernetes pkg/registry/core/node/strategy.go.
 *
 * Solves:
 * - a kubelet registers its node in one request, capacity, addresses and conditions included,
 *   so unlike pods a node keeps the status it is created with;
 * - afterwards the halves are split as for every resource with a status subresource: `kubectl
 *   cordon` (spec.unschedulable) cannot overwrite the heartbeat conditions, and the kubelet's
 *   status heartbeat cannot undo a cordon;
 * - `kubectl get nodes --field-selector spec.unschedulable=false` lists the nodes still open
 *   to new pods.
 *
 * Invariants:
 * - prepareForCreate keeps everything but `spec.configSource` (DynamicKubeletConfig is gone);
 * - prepareForUpdate keeps the old status; the status strategy keeps the old spec.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/node/strategy.go (nodeStrategy, nodeStatusStrategy, NodeToSelectableFields, dropDisabledFields)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (AddFieldLabelConversionsForNode)
 * @chapter 02-apiserver
 */
import type { Node } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, keepFromOld, objectMetaFieldsSet, statusStrategy } from "./helpers.ts";
import { validateStatusUpdate } from "./validation.ts";

type NodeSpecExtras = { configSource?: unknown };

// #region node-strategy
function prepareForCreate(obj: KubeObject): void {
  // Nodes allow *all* fields, including status, to be set on create.
  const spec = (obj as Node).spec as NodeSpecExtras | undefined;
  if (spec) delete spec.configSource;
}

function prepareForUpdate(obj: KubeObject, old: KubeObject): void {
  keepFromOld(obj, old, "status");
  const spec = (obj as Node).spec as NodeSpecExtras | undefined;
  const oldSpec = (old as Node).spec as NodeSpecExtras | undefined;
  // A field of a removed feature survives only on nodes that already had it.
  if (spec && oldSpec?.configSource === undefined) delete spec.configSource;
}

export function nodeSelectableFields(obj: KubeObject): Record<string, string> {
  return {
    ...objectMetaFieldsSet(obj, false),
    "spec.unschedulable": String((obj as Node).spec?.unschedulable ?? false),
  };
}

export const nodeStrategy: RESTStrategy = {
  ...baseStrategy(false),
  prepareForCreate,
  prepareForUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  selectableFields: nodeSelectableFields,
  fieldLabels: ["metadata.name", "spec.unschedulable"],
};

nodeStrategy.status = statusStrategy(nodeStrategy, {
  prepareForCreate: () => {},
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "spec");
  },
  validateUpdate: validateStatusUpdate,
});
// #endregion node-strategy
