/**
 * Exercise: preemption's victim selection — the core of DefaultPreemption's SelectVictimsOnNode.
 * Given the pods on one node that have lower priority than the preemptor, choose the fewest and
 * least important of them to evict so that the preemptor fits.
 *
 * `ops` works on a copy of the node: `removePod` / `addPod` change it, `fits()` runs Filter for the
 * preemptor on it as it is now, `moreImportant(a, b)` orders pods, `splitByPDB` says which
 * evictions would break a PodDisruptionBudget. Return [victims (most important first), the
 * number of victims that break a PDB, a Status (undefined: success)]. README.md has the rules.
 */
import type { Pod } from "../../../code/api/core.ts";
import type { Status } from "../../../code/scheduler/framework/status.ts";
import type { PodInfo } from "../../../code/scheduler/framework/types.ts";
import type { VictimOps } from "../../../code/scheduler/plugins/defaultpreemption/default-preemption.ts";

export function selectVictims(potential: PodInfo[], ops: VictimOps): [Pod[], number, Status | undefined] {
  throw new Error(`TODO: selectVictims(${potential.length} potential victims, ${typeof ops})`);
}
