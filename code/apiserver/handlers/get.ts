/**
 * The get handler — `GET /api/v1/namespaces/default/pods/web`: one object, as JSON or as the
 * one-row Table kubectl prints. Upstream: GetResource in k8s.io/apiserver's handlers/get.go.
 *
 * Solves: `kubectl get pod web` and `kubectl get pod web -o yaml` read the same object; the
 * `resourceVersion` query parameter says how fresh it must be ("" = newest, "0" = any).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go (GetResource, getResourceHandler)
 * @chapter 02-apiserver
 */
import { type RequestScope, writeObject } from "./rest.ts";

// #region get-handler
export async function getResource(scope: RequestScope): Promise<void> {
  const rv = scope.query.get("resourceVersion") ?? undefined;
  const obj = await scope.store.get(scope.info.namespace, scope.info.name, rv);
  writeObject(scope, 200, obj);
}
// #endregion get-handler
