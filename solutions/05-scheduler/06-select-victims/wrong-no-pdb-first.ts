// Mistake: the pods are given back in priority order only, PDB-protected or not (the split is
// used just to count violations). Plausible: priority is "the" importance. But a protected pod
// that could have stayed is evicted while an unprotected one stays: a PodDisruptionBudget is
// broken when another choice would have kept it.
import type { Pod } from "../../../code/api/core.ts";
import { asStatus, isSuccess, type Status } from "../../../code/scheduler/framework/status.ts";
import type { PodInfo } from "../../../code/scheduler/framework/types.ts";
import type { VictimOps } from "../../../code/scheduler/plugins/defaultpreemption/default-preemption.ts";

export function selectVictims(potential: PodInfo[], ops: VictimOps): [Pod[], number, Status | undefined] {
  for (const pi of potential) {
    const err = ops.removePod(pi);
    if (err) return [[], 0, asStatus(err)];
  }
  // Not enough even with all of them gone: this node cannot help.
  const s = ops.fits();
  if (!isSuccess(s)) return [[], 0, s];

  const byImportance = (a: Pod, b: Pod) => (ops.moreImportant(a, b) ? -1 : ops.moreImportant(b, a) ? 1 : 0);
  const sorted = [...potential].sort((a, b) => byImportance(a.pod, b.pod));
  const [violating, nonViolating] = ops.splitByPDB(sorted);

  const victims: Pod[] = [];
  const reprieve = (pi: PodInfo): boolean | Error => {
    const addErr = ops.addPod(pi);
    if (addErr) return addErr;
    if (isSuccess(ops.fits())) return true;
    const rmErr = ops.removePod(pi);
    if (rmErr) return rmErr;
    victims.push(pi.pod);
    return false;
  };

  let numViolating = 0;
  for (const pi of sorted) {
    const kept = reprieve(pi);
    if (kept instanceof Error) return [[], 0, asStatus(kept)];
    if (!kept && violating.includes(pi)) numViolating++;
  }
  // Two groups interleave priorities: most important first again.
  if (violating.length > 0 && nonViolating.length > 0) victims.sort(byImportance);
  return [victims, numViolating, undefined];
}
