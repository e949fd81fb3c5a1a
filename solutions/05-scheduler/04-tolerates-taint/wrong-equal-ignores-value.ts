// Mistake: a matching key is enough; the value is never compared (Equal behaves as Exists).
// Plausible: most taints are used with Exists. But `dedicated=gpu` and `dedicated=infra` are
// different teams' nodes: with this mistake a pod tolerating `dedicated=gpu` lands on infra's.
import type { Taint, Toleration } from "../../../code/api/core.ts";

export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  if (toleration.key && toleration.key !== taint.key) return false;
  return toleration.operator === "Exists" || toleration.operator === "Equal" || !toleration.operator;
}
