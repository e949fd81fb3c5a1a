/**
 * Strategy validation — the one door from a strategy's Validate to code/api/validation.ts.
 * Upstream each strategy calls its kind's own functions (`ValidatePodCreate`, `ValidateNodeUpdate`,
 * … in kubernetes pkg/apis/core/validation/validation.go and its apps, coordination siblings).
 *
 * Solves:
 * - ours dispatch on `kind` through `validateObject` and `validateObjectUpdate`, so a strategy
 *   file states only what is special about its resource;
 * - tests of a strategy's own logic (what it clears, keeps and bumps) can replace this module
 *   and stay independent of the validation rules.
 *
 * Invariants:
 * - every function returns all the field errors at once (never throws for bad input).
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidatePodCreate, ValidatePodUpdate, ValidatePodStatusUpdate, ValidateNode, ValidateNodeUpdate, …)
 * @chapter 02-apiserver
 */
import type { FieldError } from "../../../api/field-errors.ts";
import type { KubeObject } from "../../../api/meta.ts";
import {
  validateNamespaceFinalizeUpdate as validateNamespaceFinalize,
  validateObject,
  validateObjectStatusUpdate,
  validateObjectUpdate,
} from "../../../api/validation.ts";

/** Validate on create: the kind's rules for a new object. */
export function validateCreate(obj: KubeObject): FieldError[] {
  return validateObject(obj);
}

/** Validate on update: the kind's rules for the new object, plus what may not change. */
export function validateUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  return validateObjectUpdate(obj, old);
}

/**
 * Validate a write to the status subresource (the strategy has already put the old spec back):
 * the kind's status rules, such as ValidatePodStatusUpdate.
 */
export function validateStatusUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  return validateObjectStatusUpdate(obj, old);
}

/**
 * Validate a write to a namespace's `finalize` subresource (the strategy has already put the old
 * status back): ValidateNamespaceFinalizeUpdate — the metadata rules, and every finalizer a
 * qualified name.
 */
export function validateNamespaceFinalizeUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  return validateNamespaceFinalize(obj, old);
}
