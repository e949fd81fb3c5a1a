// Mistake: the keys are compared even when the toleration's key is empty.
// Plausible: "a toleration is for a key". But `operator: Exists` with no key is how DaemonSets
// and critical add-ons say "tolerate everything": with this mistake such a pod is kept off every
// tainted node, a node going NotReady included.
import type { Taint, Toleration } from "../../../code/api/core.ts";
import { toleratesTaint as correct } from "./tolerates-taint.ts";

export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if ((toleration.key ?? "") !== taint.key) return false;
  return correct(toleration, taint);
}
