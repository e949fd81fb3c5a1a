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
import { newBadRequest } from "../errors.ts";
import { apiVersionOf } from "../resources.ts";
import { decodeRequestObject } from "./create.ts";
import { dryRunParam, type RequestScope, trackManagedFields, writeObject } from "./rest.ts";

// #region update-handler
export async function updateResource(scope: RequestScope): Promise<void> {
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
  const { obj: stored, created } = await scope.store.update(
    scope.info.namespace,
    scope.info.name,
    (current) => trackManagedFields(scope, current, structuredClone(obj)),
    { strategy, dryRun: dryRunParam(scope.query, "UpdateOptions") },
  );
  writeObject(scope, created ? 201 : 200, stored);
}
// #endregion update-handler
