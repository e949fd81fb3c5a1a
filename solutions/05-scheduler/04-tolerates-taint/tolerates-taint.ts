/**
 * Solution: Toleration.ToleratesTaint (upstream: staging/src/k8s.io/api/core/v1/toleration.go).
 */
import type { Taint, Toleration } from "../../../code/api/core.ts";

export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  // An empty effect tolerates the taint whatever its effect.
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  // An empty key (only valid with Exists) matches every key.
  if (toleration.key && toleration.key !== taint.key) return false;
  switch (toleration.operator ?? "") {
    // The empty operator means Equal: the values must match (both may be empty).
    case "":
    case "Equal":
      return (toleration.value ?? "") === (taint.value ?? "");
    case "Exists":
      return true;
    default:
      return false;
  }
}
