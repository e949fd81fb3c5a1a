/**
 * PriorityClass validation — user classes stay below the system band; `system-` names are
 * reserved for the built-in classes; value and preemption policy never change.
 * Upstream: kubernetes' pkg/apis/scheduling/validation/validation.go.
 *
 * Solves:
 * - a user who could create a class worth 2,000,000,000 could preempt the cluster's own DNS
 *   or network pods; capping user values at 1,000,000,000 keeps the system band for the system;
 * - pods already carry a copied `priority` number: changing a class's value later would
 *   silently disagree with every pod created from it, so the value is frozen.
 *
 * Invariants:
 * - a name starting with `system-` must be a known system class with exactly its value and
 *   `globalDefault: false`;
 * - messages are upstream's, including "may not be changed in an update." with its full stop.
 *
 * @upstream kubernetes/kubernetes pkg/apis/scheduling/validation/validation.go (ValidatePriorityClass, ValidatePriorityClassUpdate)
 * @upstream kubernetes/kubernetes pkg/apis/scheduling/v1/helpers.go (IsKnownSystemPriorityClass)
 * @chapter 02-apiserver
 */

import { type FieldError, forbidden } from "./field-errors.ts";
import { isSet, num } from "./json.ts";
import type { KubeObject } from "./meta.ts";
import {
  validateImmutableField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "./object-meta-validation.ts";
import { validatePreemptionPolicy } from "./pod-validation.ts";
import {
  HIGHEST_USER_DEFINABLE_PRIORITY,
  SYSTEM_PRIORITY_CLASS_PREFIX,
  SYSTEM_PRIORITY_CLASSES,
} from "./scheduling.ts";
import { nameIsDNSSubdomain } from "./string-validation.ts";

/** IsKnownSystemPriorityClass: undefined when it is one, else upstream's reason why not. */
function systemPriorityClassError(name: string, value: number, globalDefault: boolean): string | undefined {
  const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (known.value !== value) return `value of ${name} PriorityClass must be ${known.value}`;
  if (globalDefault !== false) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

// #region validate-priority-class
/** ValidatePriorityClass: a `system-` name must be a built-in class as it is; any other stays in the user band. */
export function validatePriorityClass(priorityClass: KubeObject): FieldError[] {
  const errors = validateObjectMeta(priorityClass.metadata, false, nameIsDNSSubdomain);
  const name = priorityClass.metadata?.name ?? "";
  const value = num(priorityClass.value);
  if (name.startsWith(SYSTEM_PRIORITY_CLASS_PREFIX)) {
    const reason = systemPriorityClassError(name, value, priorityClass.globalDefault === true);
    if (reason) {
      errors.push(
        forbidden(
          "metadata.name",
          `priority class names with '${SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are reserved for system use only. error: ${reason}`,
        ),
      );
    }
  } else if (value > HIGHEST_USER_DEFINABLE_PRIORITY) {
    errors.push(
      forbidden(
        "value",
        `maximum allowed value of a user defined priority is ${HIGHEST_USER_DEFINABLE_PRIORITY}`,
      ),
    );
  }
  if (isSet(priorityClass.preemptionPolicy)) {
    errors.push(...validatePreemptionPolicy(priorityClass.preemptionPolicy, "preemptionPolicy"));
  }
  return errors;
}

/** ValidatePriorityClassUpdate: value and preemption policy are frozen (pods already copied them). */
export function validatePriorityClassUpdate(priorityClass: KubeObject, old: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(priorityClass.metadata, old.metadata);
  if (num(priorityClass.value) !== num(old.value))
    errors.push(forbidden("value", "may not be changed in an update."));
  errors.push(
    ...validateImmutableField(
      priorityClass.preemptionPolicy ?? null,
      old.preemptionPolicy ?? null,
      "preemptionPolicy",
    ),
  );
  return errors;
}
// #endregion validate-priority-class
