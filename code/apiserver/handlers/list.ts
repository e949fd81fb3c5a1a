/**
 * The list handler — `GET /api/v1/pods?labelSelector=app=web&limit=500`: the matching objects
 * as a `<Kind>List`, with the resourceVersion to watch from and a continue token for the next
 * page. Upstream: ListResource in k8s.io/apiserver's handlers/get.go.
 *
 * Solves:
 * - a client lists, then watches from the list's `metadata.resourceVersion`, and misses nothing
 *   in between (the list-then-watch contract informers rely on, chapter 4);
 * - large collections come in pages: `limit` and `continue` (`kubectl get` asks for 500 at a
 *   time), with `remainingItemCount` when the server knows it;
 * - `?watch=true` on the same URL is a watch, served by watch.ts.
 *
 * Invariants: every item carries `kind` and `apiVersion`; the list's resourceVersion is the
 * store revision it was read at.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go (ListResource)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (ValidateListOptions)
 * @chapter 02-apiserver
 */
import { forbidden, invalid } from "../../api/field-errors.ts";
import type { KubeList } from "../../api/meta.ts";
import { newInvalid } from "../errors.ts";
import type { ListParams } from "../registry/store.ts";
import { apiVersionOf } from "../resources.ts";
import { asTable, intParam, type RequestScope, withTypeMeta, writeJSON } from "./rest.ts";

// #region list-handler
export async function listResource(scope: RequestScope): Promise<void> {
  const params = listParams(scope.query);
  const result = await scope.store.list(scope.info.namespace, params);
  const items = result.items.map((o) => withTypeMeta(o, scope.resource));
  const metadata: KubeList["metadata"] = { resourceVersion: result.resourceVersion };
  if (result.continue) metadata.continue = result.continue;
  if (result.remainingItemCount !== undefined) metadata.remainingItemCount = result.remainingItemCount;
  if (scope.output.as === "table") {
    writeJSON(scope.res, 200, asTable(scope, items, metadata));
    return;
  }
  const list: KubeList = {
    kind: `${scope.resource.kind}List`,
    apiVersion: apiVersionOf(scope.resource),
    metadata,
    items,
  };
  writeJSON(scope.res, 200, list);
}
// #endregion list-handler

/** The list query parameters, checked as upstream's ValidateListOptions checks them. */
export function listParams(query: URLSearchParams): ListParams {
  const limit = intParam(query, "limit");
  const match = query.get("resourceVersionMatch") ?? "";
  const rv = query.get("resourceVersion") ?? undefined;
  const errs = [];
  if (match !== "" && match !== "NotOlderThan" && match !== "Exact") {
    errs.push(invalid("resourceVersionMatch", match, 'supported values: "Exact", "NotOlderThan"'));
  } else if (match !== "" && !rv) {
    errs.push(
      forbidden(
        "resourceVersionMatch",
        "resourceVersionMatch is forbidden unless resourceVersion is provided",
      ),
    );
  } else if (match === "Exact" && rv === "0") {
    errs.push(
      forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    );
  }
  if (query.get("continue") && rv && rv !== "0") {
    errs.push(forbidden("resourceVersion", "specifying resource version is not allowed when using continue"));
  }
  if (errs.length > 0) throw newInvalid("meta.k8s.io", "ListOptions", "", errs);
  return {
    labelSelector: query.get("labelSelector") ?? "",
    fieldSelector: query.get("fieldSelector") ?? "",
    limit: limit && limit > 0 ? limit : undefined,
    continue: query.get("continue") || undefined,
    resourceVersion: rv,
    resourceVersionMatch: match as ListParams["resourceVersionMatch"],
  };
}
