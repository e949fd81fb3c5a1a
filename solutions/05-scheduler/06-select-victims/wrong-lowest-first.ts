// Mistake: the victims are given back least important first. Plausible: "try to save the cheap
// pods, they are the ones we would evict anyway". But the first pods given back take the room;
// when only some can stay, the ones that stay are the unimportant ones and the important ones
// are evicted.
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
  const sorted = [...potential].sort((a, b) => byImportance(b.pod, a.pod));
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
