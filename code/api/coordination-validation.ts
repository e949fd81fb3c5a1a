/**
 * Lease validation — a lease names its holder and its durations; the durations must make sense.
 * Upstream: kubernetes' pkg/apis/coordination/validation/validation.go.
 *
 * Solves:
 * - every client computes "is this lease expired?" as `renewTime + leaseDurationSeconds < now`;
 *   a zero or negative duration would make every lease look expired at once, so it is refused;
 * - `leaseTransitions` counts hand-overs and only grows, so it cannot be negative.
 *
 * Invariants:
 * - the name rule is DNS subdomain and leases are namespaced; unlike core kinds, leases use
 *   apimachinery's ObjectMeta validation directly (no check of unprefixed finalizer names);
 * - the API server never checks who holds a lease or for how long: that is the clients' protocol.
 *
 * @upstream kubernetes/kubernetes pkg/apis/coordination/validation/validation.go (ValidateLease, ValidateLeaseUpdate, ValidateLeaseSpec)
 * @chapter 02-apiserver
 */

import type { FieldError } from "./field-errors.ts";
import { invalid } from "./field-errors.ts";
import { isSet, num, obj } from "./json.ts";
import type { KubeObject } from "./meta.ts";
import { validateObjectMeta, validateObjectMetaUpdate } from "./object-meta-validation.ts";
import { nameIsDNSSubdomain } from "./string-validation.ts";

// #region validate-lease
/** ValidateLeaseSpec: only the numbers; who holds the lease, and since when, is the clients' business. */
export function validateLeaseSpec(spec: unknown): FieldError[] {
  const s = obj(spec) ?? {};
  const errors: FieldError[] = [];
  if (isSet(s.leaseDurationSeconds) && num(s.leaseDurationSeconds) <= 0) {
    errors.push(invalid("spec.leaseDurationSeconds", num(s.leaseDurationSeconds), "must be greater than 0"));
  }
  if (isSet(s.leaseTransitions) && num(s.leaseTransitions) < 0) {
    errors.push(
      invalid("spec.leaseTransitions", num(s.leaseTransitions), "must be greater than or equal to 0"),
    );
  }
  return errors;
}

export function validateLease(lease: KubeObject): FieldError[] {
  return [
    ...validateObjectMeta(lease.metadata, true, nameIsDNSSubdomain, "metadata", { kubeFinalizers: false }),
    ...validateLeaseSpec(lease.spec),
  ];
}

export function validateLeaseUpdate(lease: KubeObject, old: KubeObject): FieldError[] {
  return [
    ...validateObjectMetaUpdate(lease.metadata, old.metadata, "metadata", { kubeFinalizers: false }),
    ...validateLeaseSpec(lease.spec),
  ];
}
// #endregion validate-lease
