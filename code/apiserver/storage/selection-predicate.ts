/**
 * SelectionPredicate — a request's label and field selectors as one test applied to each object.
 * Upstream: k8s.io/apiserver pkg/storage/selection_predicate.go.
 *
 * Solves:
 * - every storage (etcd3, the watch cache) filters the same way, so the selectors are parsed
 *   once, at the request, and the store only asks `matches(obj)`;
 * - field selectors need each resource's list of selectable fields (`spec.nodeName` for pods,
 *   `involvedObject.name` for events): the resource hands in `getAttrs`, the same job upstream's
 *   `GetAttrs` does in each registry's strategy;
 * - a bad selector is the client's mistake: a 400 BadRequest carrying the parser's message
 *   (`unable to parse requirement: …`), never a crash.
 *
 * Invariants:
 * - `empty` is true only when both selectors are empty; stores use it to skip the test and to
 *   report `remainingItemCount` (a count that ignores a selector would be wrong).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/selection_predicate.go (SelectionPredicate, Matches, Empty, DefaultClusterScopedAttr, DefaultNamespaceScopedAttr)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go (ListResource: the BadRequest for a selector that does not parse)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (AddFieldLabelConversionFuncs: "field label not supported")
 * @chapter 02-apiserver
 */
import * as fields from "../../api/fields.ts";
import { parse as parseLabelSelector } from "../../api/label-selector-parser.ts";
import * as labels from "../../api/labels.ts";
import type { KubeObject } from "../../api/meta.ts";
import { newBadRequest } from "../errors.ts";
import type { SelectionPredicate } from "./interfaces.ts";

/** Returns an object's selectable fields: `metadata.name`, `metadata.namespace`, and the resource's own. */
export type AttrFunc = (obj: KubeObject) => Record<string, string>;

// #region default-attrs
/** DefaultClusterScopedAttr / DefaultNamespaceScopedAttr: every resource can select on these. */
export function defaultAttrs(obj: KubeObject): Record<string, string> {
  const attrs: Record<string, string> = { "metadata.name": obj.metadata.name ?? "" };
  if (obj.metadata.namespace !== undefined) attrs["metadata.namespace"] = obj.metadata.namespace;
  return attrs;
}
// #endregion default-attrs

// #region new-selection-predicate
/** Upstream's message for a field label the resource does not support. */
export function fieldLabelNotSupportedMessage(label: string): string {
  return `field label not supported: ${label}`;
}

/**
 * The field a field-selector label means for the resource (`spec.host` → `spec.nodeName`), or
 * undefined when the resource does not support it (upstream's ConvertFieldLabel).
 */
export type FieldLabelConversionFunc = (label: string) => string | undefined;

/**
 * Parses both selectors; throws a StatusError 400 BadRequest with the parser's message when
 * either is malformed. Given the resource's `convertFieldLabel`, each field of the field selector
 * is converted (fieldSelector.Transform), and one the resource does not support is refused —
 * `field label not supported: spec.foo` — as upstream's list and watch handlers refuse it.
 */
export function newSelectionPredicate(
  labelSelector: string,
  fieldSelector: string,
  getAttrs: AttrFunc = defaultAttrs,
  convertFieldLabel?: FieldLabelConversionFunc,
): SelectionPredicate {
  const parsedLabels = parseLabelSelector(labelSelector);
  if (!parsedLabels.ok) throw newBadRequest(parsedLabels.error.message);
  const parsedFields = fields.parse(fieldSelector);
  if (!parsedFields.ok) throw newBadRequest(parsedFields.error.message);
  let fieldSel = parsedFields.value;
  if (convertFieldLabel) {
    const requirements = fieldSel.requirements.map((r) => {
      const field = convertFieldLabel(r.field);
      if (field === undefined) throw newBadRequest(fieldLabelNotSupportedMessage(r.field));
      return { ...r, field };
    });
    fieldSel = { requirements };
  }
  return predicateFor(parsedLabels.value, fieldSel, getAttrs);
}

export function predicateFor(
  labelSelector: labels.Selector,
  fieldSelector: fields.FieldSelector,
  getAttrs: AttrFunc = defaultAttrs,
): SelectionPredicate {
  const noLabels = labels.isEmptySelector(labelSelector);
  const noFields = fields.isEmpty(fieldSelector);
  return {
    empty: noLabels && noFields,
    matcherValue(field: string): string | undefined {
      return fieldSelector.requirements.find((r) => r.field === field && r.operator !== "!=")?.value;
    },
    matches(obj: KubeObject): boolean {
      if (!noLabels && !labels.selectorMatches(labelSelector, obj.metadata.labels ?? {})) return false;
      // Field attributes are computed only when a field selector needs them.
      return noFields || fields.matches(fieldSelector, getAttrs(obj));
    },
  };
}
// #endregion new-selection-predicate

/** The predicate that matches every object (upstream's `storage.Everything`). */
export const everything: SelectionPredicate = { empty: true, matches: () => true };
