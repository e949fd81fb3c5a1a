/**
 * The create handler — `POST /api/v1/namespaces/default/pods`: read the body, decode it, apply
 * defaults, check for unknown fields, and hand the object to the registry. Upstream: createHandler
 * in k8s.io/apiserver's handlers/create.go.
 *
 * Solves:
 * - the object a client sends is incomplete (no uid, no defaults): decoding fills defaults as
 *   upstream does during decode, the registry fills the rest, the client gets back the stored
 *   object with 201 Created;
 * - `kubectl create` sends `?fieldValidation=Strict`: a misspelled field is refused, not dropped.
 *
 * Invariants: the answer is the stored object (with its resourceVersion), or a Status.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go (createHandler)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { addEvent } from "../../tracing/tracing.ts"; // chapter 8: tracing
import { decodeBody, type FieldValidation } from "../negotiation.ts";
import { apiVersionOf } from "../resources.ts";
import { admitCreate, createValidation } from "./admission.ts";
import { checkFieldValidation } from "./field-validation.ts";
import { dryRunParam, type RequestScope, readBody, trackManagedFields, writeObject } from "./rest.ts";
import { addWarnings } from "./warnings.ts";

// #region create-handler
export async function createResource(scope: RequestScope): Promise<void> {
  const obj = await decodeRequestObject(scope, {
    apiVersion: apiVersionOf(scope.resource),
    kind: scope.resource.kind,
  });
  const dryRun = dryRunParam(scope.query, "CreateOptions");
  // The request's fields are its manager's before mutating admission runs (upstream's order, as
  // update and patch do): what admission adds — a token volume, tolerations — is no one's.
  const tracked = trackManagedFields(scope, undefined, obj);
  addEvent("About to store object in database"); // chapter 8: tracing, upstream's event names
  await admitCreate(scope, tracked);
  const created = await scope.store.create(scope.info.namespace, tracked, {
    dryRun,
    createValidation: createValidation(scope),
  });
  addEvent("Write to database call succeeded");
  writeObject(scope, 201, created);
}
// #endregion create-handler

/** Reads, decodes, checks field validation and defaults a request body (create and update). */
export async function decodeRequestObject(
  scope: RequestScope,
  expected: { apiVersion: string; kind: string },
  applyDefaults = true,
): Promise<KubeObject> {
  const body = await readBody(scope.req);
  addEvent("limitedReadBody succeeded", { len: body.length }); // chapter 8: tracing
  const fieldValidation: FieldValidation = { directive: scope.query.get("fieldValidation"), warnings: [] };
  const obj = decodeBody(
    scope.req.headers["content-type"],
    body,
    expected,
    scope.decodeProtobuf,
    fieldValidation,
  );
  // Kinds without a .proto message are checked by name (field-validation.ts); typed kinds by decoding.
  addWarnings(scope.res, [
    ...fieldValidation.warnings,
    ...checkFieldValidation(fieldValidation.directive, obj, fieldValidation.namesChecked),
  ]);
  if (applyDefaults) scope.setDefaults(obj);
  scope.audit?.logRequestObject(obj); // chapter 3 audit: requestObject, objectRef's name
  return obj;
}
