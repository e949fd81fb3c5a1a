/**
 * Toleration matching — does a pod's toleration cover a node's taint, and which taint of a node
 * no toleration covers.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/toleration.go (Toleration.ToleratesTaint)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/scheduling/corev1/helpers.go (FindMatchingUntoleratedTaint)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/helper/helpers.go (TolerationsTolerateTaint)
 * @chapter 05-scheduler
 *
 * Solves: NodeUnschedulable, TaintToleration (Filter and Score) and later the taint-eviction
 * controller all ask the same question; one definition keeps them agreeing.
 *
 * Invariants:
 * - an empty toleration effect matches every effect; an empty key with Exists matches every
 *   taint; operator "" means Equal, which compares values (both may be empty).
 * - FindMatchingUntoleratedTaint returns the first taint (in node order) that passes the filter
 *   and that no toleration tolerates.
 */
import type { Taint, Toleration } from "../../../api/core.ts";

// #region tolerates
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? "") {
    case "":
    case "Equal":
      return (t.value ?? "") === (taint.value ?? "");
    case "Exists":
      return true;
    default:
      return false;
  }
}
// #endregion tolerates

export function tolerationsTolerateTaint(ts: readonly Toleration[] | undefined, taint: Taint): boolean {
  return (ts ?? []).some((t) => toleratesTaint(t, taint));
}

export function findMatchingUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  inclusionFilter: (t: Taint) => boolean,
): Taint | undefined {
  for (const taint of taints ?? []) {
    if (!inclusionFilter(taint)) continue;
    if (!tolerationsTolerateTaint(tolerations, taint)) return taint;
  }
  return undefined;
}
