/**
 * Admission in the handlers — where a write meets the admission chain: mutation before the
 * registry prepares and validates the object, validation just before storage. Upstream spreads
 * this over k8s.io/apiserver's handlers/create.go, update.go, patch.go and delete.go, with the
 * adapters of pkg/registry/rest (AdmissionToValidateObjectFunc and friends).
 *
 * Solves:
 * - a mutating plugin changes the object the client sent (a default service account, a
 *   sidecar) before the registry validates it, so a mutation that breaks the object is caught;
 * - a validating plugin judges the final object — after every mutation, defaults and the
 *   registry's own preparation — so what it allows is what is stored;
 * - for an update, mutation runs inside the optimistic-concurrency retry, on the object merged
 *   with the current one: a lost race is admitted again, against the new current state.
 *
 * Invariants:
 * - without a chain (chapters 1–2, the insecure port's tests) nothing here runs;
 * - warnings the plugins add reach the client as `Warning` headers.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go (createHandler: mutatingAdmission.Admit, AdmissionToValidateObjectFunc)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/update.go (UpdateResource: the admission transformer)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/update.go (AdmissionToValidateObjectFunc, AdmissionToValidateObjectUpdateFunc)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/attributes.go (NewAttributesRecord)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../api/meta.ts";
import type { Attributes, Operation } from "../admission/interfaces.ts";
import { InsecureUser } from "../authn/user.ts";
import type { UpdatedObjectFunc, ValidateObjectFunc, ValidateObjectUpdateFunc } from "../registry/store.ts";
import type { RequestScope } from "./rest.ts";
import { addWarnings } from "./warnings.ts";

// #region attributes
/** NewAttributesRecord for this request. */
export function admissionAttributes(
  scope: RequestScope,
  operation: Operation,
  object: KubeObject | undefined,
  oldObject: KubeObject | undefined,
  kind = scope.resource.kind,
): Attributes {
  const { info, resource } = scope;
  const subresource = info.subresource
    ? resource.subresources.find((s) => s.name === info.subresource)
    : undefined;
  return {
    name: info.name || (object?.metadata?.name ?? ""),
    namespace: info.namespace,
    resource: { group: resource.group, version: resource.version, resource: resource.resource },
    subresource: info.subresource,
    kind: {
      group: subresource?.group ?? resource.group,
      version: subresource?.version ?? resource.version,
      kind: subresource?.kind || kind,
    },
    operation,
    options: operationOptions(scope, operation),
    dryRun: scope.query.has("dryRun"),
    object,
    oldObject,
    userInfo: scope.user ?? InsecureUser,
    // Chapter 3 audit: what plugins note goes straight into the request's audit event.
    annotations: scope.audit?.annotations ?? {},
    warnings: [],
  };
}

/**
 * The CreateOptions or UpdateOptions of a create or update (a patch is an update, an apply
 * that creates a create), from the query, as a webhook reads them in `request.options`.
 * Delete sets its DeleteOptions itself. (chapter 3: webhooks)
 */
function operationOptions(scope: RequestScope, operation: Operation): KubeObject | undefined {
  if (operation !== "CREATE" && operation !== "UPDATE") return undefined;
  const options: Record<string, unknown> = {
    kind: operation === "CREATE" ? "CreateOptions" : "UpdateOptions",
    apiVersion: "meta.k8s.io/v1",
  };
  const dryRun = scope.query.getAll("dryRun");
  if (dryRun.length > 0) options.dryRun = dryRun;
  const fieldManager = scope.query.get("fieldManager");
  if (fieldManager) options.fieldManager = fieldManager;
  const fieldValidation = scope.query.get("fieldValidation");
  if (fieldValidation) options.fieldValidation = fieldValidation;
  return options as unknown as KubeObject;
}
// #endregion attributes

// #region admit
/** Mutating admission of a create (or a connect): the plugins may change `obj` in place. */
export async function admitCreate(scope: RequestScope, obj: KubeObject, kind?: string): Promise<void> {
  if (!scope.admission) return;
  const a = admissionAttributes(scope, "CREATE", obj, undefined, kind);
  await scope.admission.admit(a);
  addWarnings(scope.res, a.warnings ?? []);
}

/** The update's transformer: mutate what `updated` makes of the current object, on every try. */
export function withMutatingAdmission(scope: RequestScope, updated: UpdatedObjectFunc): UpdatedObjectFunc {
  const chain = scope.admission;
  if (!chain) return updated;
  return async (current) => {
    const obj = await updated(current);
    // No current object: an update that creates (PUT of a missing object, apply).
    const a = admissionAttributes(scope, current ? "UPDATE" : "CREATE", obj, current);
    await chain.admit(a);
    addWarnings(scope.res, a.warnings ?? []);
    return obj;
  };
}
// #endregion admit

// #region validate
/** The registry's createValidation: validating admission of the object to be stored. */
export function createValidation(scope: RequestScope, kind?: string): ValidateObjectFunc | undefined {
  const chain = scope.admission;
  if (!chain) return undefined;
  return async (obj) => {
    const a = admissionAttributes(scope, "CREATE", obj, undefined, kind);
    await chain.validate(a);
    addWarnings(scope.res, a.warnings ?? []);
  };
}

/** The registry's updateValidation. */
export function updateValidation(scope: RequestScope): ValidateObjectUpdateFunc | undefined {
  const chain = scope.admission;
  if (!chain) return undefined;
  return async (obj, old) => {
    const a = admissionAttributes(scope, "UPDATE", obj, old);
    await chain.validate(a);
    addWarnings(scope.res, a.warnings ?? []);
  };
}

/**
 * Admission of a delete: mutating plugins see no object (as upstream's delete handler calls
 * them), validating ones the object about to go.
 */
export async function admitDelete(
  scope: RequestScope,
  options: KubeObject,
): Promise<ValidateObjectFunc | undefined> {
  const chain = scope.admission;
  if (!chain) return undefined;
  const a = admissionAttributes(scope, "DELETE", undefined, undefined);
  a.options = options;
  await chain.admit(a);
  return async (existing) => {
    const v = admissionAttributes(scope, "DELETE", undefined, existing);
    v.name = existing.metadata.name ?? "";
    v.options = options;
    await chain.validate(v);
    addWarnings(scope.res, v.warnings ?? []);
  };
}
// #endregion validate
