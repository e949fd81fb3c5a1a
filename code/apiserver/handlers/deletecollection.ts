/**
 * The deletecollection handler — `DELETE /api/v1/namespaces/default/pods?labelSelector=app=web`:
 * delete every object the selectors match, each as a single delete would. Upstream:
 * DeleteCollection in k8s.io/apiserver's handlers/delete.go.
 *
 * Solves: emptying a namespace takes one request per resource, not one per object — what the
 * namespace controller sends (client-go's DeleteCollection). kubectl never sends it: `kubectl
 * delete pods -l app=web` lists and then deletes the pods one by one.
 *
 * Invariants: the answer is the list of what was deleted (or marked for deletion), as upstream's
 * store returns it; an object deleted by someone else meanwhile is skipped, not an error.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go (DeleteCollection)
 * @chapter 02-apiserver
 */

import type { KubeObject } from "../../api/meta.ts";
import { apiVersionOf } from "../resources.ts";
import { admitDelete } from "./admission.ts";
import { readDeleteOptions } from "./delete.ts";
import { listParams } from "./list.ts";
import { type RequestScope, withTypeMeta, writeJSON } from "./rest.ts";

// #region deletecollection-handler
export async function deleteCollection(scope: RequestScope): Promise<void> {
  const params = listParams(scope.query);
  const options = await readDeleteOptions(scope);
  const deleteValidation = await admitDelete(scope, options as KubeObject);
  const deleted = await scope.store.deleteCollection(scope.info.namespace, params, options, deleteValidation);
  const rv = await scope.store.storage.currentResourceVersion();
  writeJSON(scope.res, 200, {
    kind: `${scope.resource.kind}List`,
    apiVersion: apiVersionOf(scope.resource),
    metadata: { resourceVersion: rv },
    items: deleted.map((o) => withTypeMeta(o, scope.resource)),
  });
}
// #endregion deletecollection-handler
