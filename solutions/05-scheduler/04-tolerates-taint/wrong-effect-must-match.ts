// Mistake: the effects are compared even when the toleration names none.
// Plausible: "the toleration is for this effect" reads like an equality. But an empty effect
// means every effect: a pod tolerating `dedicated=gpu` with no effect is meant to run on the
// node whether the taint is NoSchedule or NoExecute — and here it is kept off both.
import type { Taint, Toleration } from "../../../code/api/core.ts";
import { toleratesTaint as correct } from "./tolerates-taint.ts";

export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if ((toleration.effect ?? "") !== taint.effect) return false;
  return correct(toleration, taint);
}
