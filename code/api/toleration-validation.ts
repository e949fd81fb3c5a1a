/**
 * Toleration validation — a pod's `tolerations`: which node taints the pod accepts. Upstream does
 * the same in pkg/apis/core/validation/validation.go (ValidateTolerations).
 *
 * Solves:
 * - a toleration is matched against taints by the scheduler (chapter 5) and the taint manager;
 *   one that could never match as written (a value with `Exists`, an unknown effect) is refused
 *   instead of silently tolerating nothing — or everything.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidateTolerations)
 * @chapter 02-apiserver
 */

import { childPath, type FieldError, indexPath, invalid, notSupported } from "./field-errors.ts";
import { arr, isSet, obj, str } from "./json.ts";
import { validateLabelName } from "./object-meta-validation.ts";
import { isValidLabelValue } from "./string-validation.ts";

const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/** ValidateTolerations: empty key only with Exists; tolerationSeconds only for NoExecute. */
export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  arr(tolerations).forEach((entry, i) => {
    const t = obj(entry) ?? {};
    const at = indexPath(path, i);
    const key = str(t.key);
    const operator = str(t.operator);
    const value = str(t.value);
    const effect = str(t.effect);
    if (key.length > 0) errors.push(...validateLabelName(key, childPath(at, "key")));
    if (key.length === 0 && operator !== "Exists") {
      errors.push(
        invalid(
          childPath(at, "operator"),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (isSet(t.tolerationSeconds) && effect !== "NoExecute") {
      errors.push(
        invalid(
          childPath(at, "effect"),
          effect,
          "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ),
      );
    }
    switch (operator) {
      case "Equal":
      case "": {
        const messages = isValidLabelValue(value);
        if (messages.length > 0) errors.push(invalid(childPath(at, "operator"), value, messages.join(";")));
        break;
      }
      case "Exists":
        if (value.length > 0) {
          errors.push(
            invalid(childPath(at, "operator"), value, "value must be empty when `operator` is 'Exists'"),
          );
        }
        break;
      default:
        errors.push(notSupported(childPath(at, "operator"), operator, ["Equal", "Exists"]));
    }
    if (effect.length > 0 && !TAINT_EFFECTS.includes(effect)) {
      errors.push(notSupported(childPath(at, "effect"), effect, TAINT_EFFECTS));
    }
  });
  return errors;
}
