/**
 * The patch handler — `PATCH .../pods/web` with a body that says how to change the object, in
 * one of four languages chosen by Content-Type:
 * - `application/json-patch+json` (RFC 6902): a list of operations (`replace /spec/replicas`);
 * - `application/merge-patch+json` (RFC 7386): a partial object; `null` deletes a field;
 * - `application/strategic-merge-patch+json`: a partial object whose lists merge by key
 *   (containers by name) — what `kubectl patch` and client-side `kubectl apply` send;
 * - `application/apply-patch+yaml`: server-side apply, with `fieldManager` (and `force`).
 *
 * Upstream: PatchResource in k8s.io/apiserver's handlers/patch.go, one patcher per language.
 *
 * Solves: a client changes one field without sending (and racing on) the whole object: the
 * patch is applied to the current object inside the registry's update, so a concurrent write
 * between read and write is retried against the new object, not overwritten.
 *
 * Invariants: the patched object goes through the same defaulting, strategy and validation as a
 * PUT; a Content-Type that is none of the four is a 415.
 *
 * Every patch records its manager's fields in `metadata.managedFields` (rest.ts,
 * trackManagedFields), as every write does; an apply also checks them for conflicts
 * (patch/server-side-apply.ts).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (PatchResource, patcher, jsonPatcher, smpPatcher, applyPatcher)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (ValidatePatchOptions)
 * @chapter 02-apiserver
 */

import type { KubeObject } from "../../api/meta.ts";
import { addEvent } from "../../tracing/tracing.ts"; // chapter 8: tracing
import {
  checkApplyConfiguration,
  decodeAppliedObject,
  decodePatchedObject,
  patchBodyStrictErrors,
} from "../decoding/patched-object.ts";
import { newBadRequest, newNotFound, newUnsupportedMediaTypeError } from "../errors.ts";
import { parseJSON, parseMediaType } from "../negotiation.ts";
import { applyJSONPatch } from "../patch/json-patch.ts";
import { applyMergePatch } from "../patch/merge-patch.ts";
import { patchTypes as patchContentTypes, validatePatchOptions } from "../patch/patch-options.ts";
import { applyServerSideApply, decodeApplyPatch } from "../patch/server-side-apply.ts";
import { applyStrategicMergePatch } from "../patch/strategic-merge-patch.ts";
import { apiVersionOf } from "../resources.ts";
import { createValidation, updateValidation, withMutatingAdmission } from "./admission.ts";
import {
  boolParam,
  dryRunParam,
  fieldManagerOf,
  type RequestScope,
  readBody,
  trackManagedFields,
  writeObject,
} from "./rest.ts";
import { addWarnings } from "./warnings.ts";

/** The four Content-Types a PATCH may carry, in the order the 415 message lists them. */
export const patchTypes: string[] = Object.values(patchContentTypes);

// #region patch-handler
export async function patchResource(scope: RequestScope): Promise<void> {
  const patchType = parseMediaType(scope.req.headers["content-type"] ?? "").type;
  if (!patchTypes.includes(patchType)) {
    throw newUnsupportedMediaTypeError(patchTypes);
  }
  const isApply = patchType === "application/apply-patch+yaml";
  // PatchOptions.force, decoded as upstream's parameter codec does: absent, or true unless 0/false.
  const force = scope.query.has("force") ? boolParam(scope.query, "force") : undefined;
  const invalid = validatePatchOptions(
    {
      fieldManager: scope.query.get("fieldManager") ?? undefined,
      force,
    },
    patchType,
  );
  if (invalid) throw invalid;
  const body = await readBody(scope.req);
  scope.audit?.logRequestPatch(body); // chapter 3 audit: a patch is logged as sent
  const patch = isApply ? decodeApplyPatch(body.toString("utf8")) : parseJSON(body);
  const apiVersion = apiVersionOf(scope.resource);
  const kind = scope.resource.kind;
  const strategy = scope.info.subresource === "status" ? scope.store.strategy.status : undefined;
  const manager = fieldManagerOf(scope);
  // The patched object is decoded as the kind's type, with field validation (decoding/patched-object.ts).
  const directive = scope.query.get("fieldValidation");
  const patchStrictErrors = patchBodyStrictErrors(body, patchType, directive);
  let warnings: string[] = [];
  const expected = { apiVersion, kind };

  addEvent("About to store object in database"); // chapter 8: tracing
  const { obj, created } = await scope.store.update(
    scope.info.namespace,
    scope.info.name,
    withMutatingAdmission(scope, (current) => {
      warnings = [];
      if (isApply) {
        checkApplyConfiguration(
          patch as Record<string, unknown>,
          expected,
          scope.info.namespace,
          scope.info.name,
        );
        // Apply creates when there is nothing yet (upstream's applyPatcher).
        const merged = applyServerSideApply(current, patch, {
          fieldManager: manager,
          force: force === true,
          apiVersion,
          kind,
        });
        const applied = decodeAppliedObject(merged, body.toString("utf8"), expected, {
          namespace: scope.info.namespace,
          name: scope.info.name,
          directive,
          warnings,
        });
        applied.metadata.name ??= scope.info.name;
        scope.setDefaults(applied);
        return applied;
      }
      if (!current) throw newNotFound(scope.store.gr, scope.info.name);
      const result = applyPatch(patchType, current, patch, apiVersion, kind) as KubeObject;
      if (result === null || typeof result !== "object" || Array.isArray(result)) {
        throw newBadRequest("the patched object is not a JSON object");
      }
      const patched = decodePatchedObject(result, {
        patchType,
        patch,
        expected,
        directive,
        patchStrictErrors,
        warnings,
      });
      patched.apiVersion ??= apiVersion;
      patched.kind ??= kind;
      if (patched.apiVersion !== apiVersion || patched.kind !== kind) {
        throw newBadRequest(
          `the API version in the data (${patched.apiVersion}) does not match the expected API version (${apiVersion})`,
        );
      }
      patched.metadata ??= {};
      scope.setDefaults(patched);
      return trackManagedFields(scope, current, patched);
    }),
    {
      strategy,
      forceAllowCreate: isApply,
      dryRun: dryRunParam(scope.query, "PatchOptions"),
      createValidation: createValidation(scope),
      updateValidation: updateValidation(scope),
    },
  );
  addWarnings(scope.res, warnings);
  addEvent("Write to database call succeeded");
  writeObject(scope, created ? 201 : 200, obj);
}
// #endregion patch-handler

function applyPatch(
  patchType: string,
  current: KubeObject,
  patch: unknown,
  apiVersion: string,
  kind: string,
): unknown {
  switch (patchType) {
    case "application/json-patch+json":
      return applyJSONPatch(current, patch);
    case "application/merge-patch+json":
      return applyMergePatch(current, patch);
    default:
      return applyStrategicMergePatch(current, patch, apiVersion, kind);
  }
}
