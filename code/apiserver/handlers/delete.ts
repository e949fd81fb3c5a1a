/**
 * The delete handler — `DELETE .../pods/web`, with DeleteOptions in the body or the query:
 * grace period, preconditions, propagation policy. Upstream: DeleteResource in
 * k8s.io/apiserver's handlers/delete.go.
 *
 * Solves:
 * - `kubectl delete pod web` must not kill a running container abruptly: the registry marks the
 *   pod (deletionTimestamp, grace period) and the kubelet finishes the job (chapter 7); an object
 *   with finalizers waits for them; the answer says which happened (the object still there,
 *   with its deletionTimestamp, or gone);
 * - kubectl sends its options as a JSON body (`{"kind":"DeleteOptions","propagationPolicy":
 *   "Background"}`), curl users as `?gracePeriodSeconds=0`: the body when there is one, else the
 *   query — never a mix of the two, as upstream.
 *
 * Invariants: 200 (202 in the one case `deleteResource` names) with the object (pods, services, namespaces, nodes, serviceaccounts) or a
 * Status Success (other resources), as upstream's ReturnDeletedObject decides.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go (DeleteResource)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (ValidateDeleteOptions)
 * @chapter 02-apiserver
 */
import { type FieldError, invalid, notSupported } from "../../api/field-errors.ts";
import type { KubeObject } from "../../api/meta.ts";
import { newBadRequest, newInvalid } from "../errors.ts";
import { parseJSON } from "../negotiation.ts";
import type { DeleteOptions } from "../registry/delete.ts";
import { admitDelete } from "./admission.ts";
import { boolParam, intParam, type RequestScope, readBody, validateDryRun, writeObject } from "./rest.ts";

// #region delete-handler
export async function deleteResource(scope: RequestScope): Promise<void> {
  const options = await readDeleteOptions(scope);
  const deleteValidation = await admitDelete(scope, options as KubeObject);
  const { obj, deleted } = await scope.store.delete(
    scope.info.namespace,
    scope.info.name,
    options,
    deleteValidation,
  );
  // 202 Accepted only when the object is still there and the client asked for cascading deletion
  // with the old `orphanDependents: false`; upstream keeps 200 for every other not-yet-deleted
  // object (a finalizer, a pod's grace period) so as not to break the clients that expect it.
  writeObject(scope, !deleted && options.orphanDependents === false ? 202 : 200, obj);
}
// #endregion delete-handler

/**
 * DeleteOptions from the body, or from the query when the body is empty (a body that sets only
 * `propagationPolicy` does not pick up `?gracePeriodSeconds=` — upstream decodes one or the
 * other), then validated.
 */
export async function readDeleteOptions(scope: RequestScope): Promise<DeleteOptions> {
  const options: DeleteOptions = {};
  const body = await readBody(scope.req);
  if (body.length === 0) {
    const q = scope.query;
    const grace = intParam(q, "gracePeriodSeconds");
    if (grace !== undefined) options.gracePeriodSeconds = grace;
    const policy = q.get("propagationPolicy");
    if (policy) options.propagationPolicy = policy as DeleteOptions["propagationPolicy"];
    if (q.has("orphanDependents")) options.orphanDependents = boolParam(q, "orphanDependents");
    if (q.getAll("dryRun").length > 0) options.dryRun = q.getAll("dryRun");
  } else {
    const parsed = parseJSON(body);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw newBadRequest("the body of a delete request must be a DeleteOptions object");
    }
    const b = parsed as DeleteOptions & { kind?: string };
    if (b.kind !== undefined && b.kind !== "DeleteOptions") {
      throw newBadRequest(`expected DeleteOptions in the body of a delete request, got ${b.kind}`);
    }
    if (b.gracePeriodSeconds !== undefined && b.gracePeriodSeconds !== null)
      options.gracePeriodSeconds = b.gracePeriodSeconds;
    if (b.propagationPolicy) options.propagationPolicy = b.propagationPolicy;
    if (b.orphanDependents !== undefined && b.orphanDependents !== null)
      options.orphanDependents = b.orphanDependents;
    if (b.preconditions) options.preconditions = b.preconditions;
    if (b.dryRun) options.dryRun = b.dryRun;
  }
  const errs: FieldError[] = [];
  if (
    options.propagationPolicy &&
    !["Orphan", "Background", "Foreground"].includes(options.propagationPolicy)
  ) {
    errs.push(
      notSupported("propagationPolicy", options.propagationPolicy, [
        "Foreground",
        "Background",
        "Orphan",
        "nil",
      ]),
    );
  }
  if (options.propagationPolicy && options.orphanDependents !== undefined) {
    errs.push(
      invalid(
        "propagationPolicy",
        options.propagationPolicy,
        "orphanDependents and deletionPropagation cannot be both set",
      ),
    );
  }
  errs.push(...validateDryRun(options.dryRun ?? []));
  if (errs.length > 0) throw newInvalid("meta.k8s.io", "DeleteOptions", "", errs);
  return options;
}
