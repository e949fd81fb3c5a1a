/**
 * Event strategy — core/v1 Events: written often, by many, selected by the object they are about.
 * Upstream: kubernetes pkg/registry/core/event/strategy.go.
 *
 * Solves:
 * - an event recorder that sees the same event again PUTs an updated count; the event may
 *   meanwhile have expired (events live one hour), so a PUT may create it (AllowCreateOnUpdate);
 * - `kubectl describe pod web` shows the pod's events by asking for
 *   `involvedObject.name=web,involvedObject.namespace=…,involvedObject.uid=…`: the
 *   involvedObject fields, reason, source and type are selectable.
 *
 * Invariants:
 * - nothing is cleared or kept on create or update: an Event has no spec/status split;
 * - `source` reads `source.component`, or `reportingComponent` when a new-API (events.k8s.io)
 *   client left source empty.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/event/strategy.go (eventStrategy, ToSelectableFields)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (AddFieldLabelConversionsForEvent)
 * @chapter 02-apiserver
 */
import type { Event } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, objectMetaFieldsSet } from "./helpers.ts";

// #region event-fields
export function eventSelectableFields(obj: KubeObject): Record<string, string> {
  const event = obj as Partial<Event>;
  const involved = event.involvedObject ?? {};
  // The core/v1 field that stores the new API's reportingController.
  const reportingController = event.reportingComponent ?? "";
  return {
    ...objectMetaFieldsSet(obj, true),
    "involvedObject.kind": involved.kind ?? "",
    "involvedObject.namespace": involved.namespace ?? "",
    "involvedObject.name": involved.name ?? "",
    "involvedObject.uid": involved.uid ?? "",
    "involvedObject.apiVersion": involved.apiVersion ?? "",
    "involvedObject.resourceVersion": involved.resourceVersion ?? "",
    "involvedObject.fieldPath": involved.fieldPath ?? "",
    reason: event.reason ?? "",
    reportingComponent: reportingController,
    source: event.source?.component || reportingController,
    type: event.type ?? "",
  };
}
// #endregion event-fields

export const eventStrategy: RESTStrategy = {
  ...baseStrategy(true),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  selectableFields: eventSelectableFields,
  fieldLabels: [
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
    "metadata.namespace",
    "metadata.name",
  ],
};
