/**
 * Selector immutability — the apps/v1 ReplicaSet and Deployment strategies' extra update rule.
 * Upstream it is part of each strategy's ValidateUpdate (kubernetes
 * pkg/registry/apps/replicaset/strategy.go, pkg/registry/apps/deployment/strategy.go).
 *
 * Solves: a workload owns the pods its selector matches; an edited selector would orphan the
 * pods it had and adopt pods it never made. apps/v1 therefore refuses the edit (the old
 * extensions/v1beta1 allowed it, which is why upstream checks it in the strategy, per API
 * version, rather than in the kind's validation).
 *
 * Invariants: adds `spec.selector: Invalid value: …: field is immutable` when the selector
 * changed (semantically), unless the same error is already in the list.
 *
 * @upstream kubernetes/kubernetes pkg/registry/apps/replicaset/strategy.go (ValidateUpdate: ValidateImmutableField on spec.selector)
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidateImmutableField, FieldImmutableErrorMsg)
 * @chapter 02-apiserver
 */
import { type FieldError, fieldErrorToString, invalid } from "../../../api/field-errors.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { semanticDeepEqual } from "./helpers.ts";

export const fieldImmutableErrorMsg = "field is immutable";

export function immutableSelector(errs: FieldError[], obj: KubeObject, old: KubeObject): FieldError[] {
  const selector = (obj.spec as { selector?: unknown } | undefined)?.selector;
  const oldSelector = (old.spec as { selector?: unknown } | undefined)?.selector;
  if (semanticDeepEqual(selector, oldSelector)) return errs;
  const err = invalid("spec.selector", selector ?? null, fieldImmutableErrorMsg);
  // The kind's own update rules may already say so; one message is enough.
  const seen = new Set(errs.map(fieldErrorToString));
  return seen.has(fieldErrorToString(err)) ? errs : [...errs, err];
}
