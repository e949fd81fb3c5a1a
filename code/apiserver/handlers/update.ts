/**
 * The update handler — `PUT /api/v1/namespaces/default/pods/web` (and `/status`): replace the
 * object with the body, if the body's resourceVersion is still the stored one. Upstream:
 * UpdateResource in k8s.io/apiserver's handlers/update.go.
 *
 * Solves: two clients that read the same version and both write must not silently lose one
 * write — the second gets 409 Conflict and must read again (optimistic concurrency). The
 * registry checks it; this handler decodes and picks the strategy (main resource or status).
 *
 * Invariants: 200 with the stored object, or 201 when the PUT created it (resources whose
 * strategy allows create-on-update: leases, events, endpoints, services).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/update.go (UpdateResource)
 * @chapter 02-apiserver
 */

import type { KubeObject } from "../../api/meta.ts";
import { addEvent } from "../../tracing/tracing.ts"; // chapter 8: tracing
import { newBadRequest } from "../errors.ts";
import type { UpdatedObjectFunc, ValidateObjectFunc, ValidateObjectUpdateFunc } from "../registry/store.ts";
import { apiVersionOf } from "../resources.ts";
import { createValidation, updateValidation, withMutatingAdmission } from "./admission.ts";
import { decodeRequestObject } from "./create.ts";
import { dryRunParam, type RequestScope, trackManagedFields, writeObject } from "./rest.ts";

/**
 * rest.Updater: what the handler's update goes through. By default the resource's store (with
 * the status strategy for `/status`); a subresource with its own REST (namespaces/finalize)
 * passes its own.
 */
export type Updater = (
  namespace: string,
  name: string,
  updated: UpdatedObjectFunc,
  opts: {
    dryRun: boolean;
    createValidation?: ValidateObjectFunc;
    updateValidation?: ValidateObjectUpdateFunc;
  },
) => Promise<{ obj: KubeObject; created: boolean }>;

// #region update-handler
export async function updateResource(scope: RequestScope, updater?: Updater): Promise<void> {
  const obj = await decodeRequestObject(scope, {
    apiVersion: apiVersionOf(scope.resource),
    kind: scope.resource.kind,
  });
  // checkName: the body names the object the URL names (before anything is read).
  if (obj.metadata.name && obj.metadata.name !== scope.info.name) {
    throw newBadRequest(
      `the name of the object (${obj.metadata.name}) does not match the name on the URL (${scope.info.name})`,
    );
  }
  const strategy = scope.info.subresource === "status" ? scope.store.strategy.status : undefined;
  const update: Updater =
    updater ??
    ((namespace, name, updated, opts) => scope.store.update(namespace, name, updated, { ...opts, strategy }));
  addEvent("About to store object in database"); // chapter 8: tracing
  const { obj: stored, created } = await update(
    scope.info.namespace,
    scope.info.name,
    withMutatingAdmission(scope, (current) => trackManagedFields(scope, current, structuredClone(obj))),
    {
      dryRun: dryRunParam(scope.query, "UpdateOptions"),
      createValidation: createValidation(scope),
      updateValidation: updateValidation(scope),
    },
  );
  addEvent("Write to database call succeeded");
  writeObject(scope, created ? 201 : 200, stored);
}
// #endregion update-handler
