/**
 * Secret strategy — like a ConfigMap, plus `type` as a selectable field.
 * Upstream: kubernetes pkg/registry/core/secret/strategy.go.
 *
 * Solves: controllers look for secrets of one kind (`type=kubernetes.io/service-account-token`,
 * `type=kubernetes.io/tls`) without listing every secret in the cluster.
 *
 * Invariants: prepareForCreate and prepareForUpdate change nothing.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/secret/strategy.go (strategy, SelectableFields)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (AddFieldLabelConversionsForSecret)
 * @chapter 02-apiserver
 */
import type { Secret } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, objectMetaFieldsSet } from "./helpers.ts";

export function secretSelectableFields(obj: KubeObject): Record<string, string> {
  return { ...objectMetaFieldsSet(obj, true), type: (obj as Secret).type ?? "" };
}

export const secretStrategy: RESTStrategy = {
  ...baseStrategy(true),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  selectableFields: secretSelectableFields,
  fieldLabels: ["type", "metadata.namespace", "metadata.name"],
};
