/**
 * Exercise 5.6 (solution): preemption's victim selection — remove every lower-priority pod,
 * then give back, most important first and PDB-protected pods before the others, every pod the
 * preemptor can live with. The pods not given back are the victims. README.md has the rules.
 */
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
  for (const pi of violating) {
    const kept = reprieve(pi);
    if (kept instanceof Error) return [[], 0, asStatus(kept)];
    if (!kept) numViolating++;
  }
  for (const pi of nonViolating) {
    const kept = reprieve(pi);
    if (kept instanceof Error) return [[], 0, asStatus(kept)];
  }
  // Two groups interleave priorities: most important first again.
  if (violating.length > 0 && nonViolating.length > 0) victims.sort(byImportance);
  return [victims, numViolating, undefined];
}
