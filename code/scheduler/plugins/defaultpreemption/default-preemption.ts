/**
 * DefaultPreemption — the PostFilter plugin: when no node fits a pod, evict lower-priority
 * pods from one node so that it will, and nominate the pod there.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go (DefaultPreemption, New, PostFilter, calculateNumCandidates, GetOffsetAndNumCandidates, SelectVictimsOnNode, PodEligibleToPreemptOthers, podTerminatingByPreemption, filterPodsWithPDBViolation)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types_pluginargs.go (DefaultPreemptionArgs)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_DefaultPreemptionArgs)
 * @chapter 05-scheduler
 *
 * Solves: the Evaluator (framework/preemption/) knows how to dry-run and evict; this plugin
 * decides who may preempt (not a pod with preemptionPolicy Never, not a pod whose earlier
 * victims are still terminating), who may be a victim (lower priority only) and how few victims
 * suffice on a node (remove them all, then give back as many as still let the pod fit).
 *
 * Invariants:
 * - a victim has strictly lower priority than the preemptor.
 * - victims are reprieved most important first, PDB-violating ones before the others, so the
 *   pods kept are the ones that matter most; the returned victims are most important first.
 * - a node with no lower-priority pod is UnschedulableAndUnresolvable for preemption ("No
 *   preemption victims found for incoming pod"): a later victim cannot appear there.
 * - the candidates looked for: max(nodes × minCandidateNodesPercentage / 100,
 *   minCandidateNodesAbsolute), at most the number of nodes; defaults 10 % and 100.
 */

import type { Pod, PodCondition } from "../../../api/core.ts";
import { labelSelectorAsSelector, selectorMatches } from "../../../api/labels.ts";
import type { DefaultPreemptionArgs } from "../../apis/config/types-pluginargs.ts";
import type { CycleState } from "../../framework/cycle-state.ts";
import type { NodeToStatus } from "../../framework/diagnosis.ts";
import type { PostFilterPlugin, PostFilterResult } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import {
  Evaluator,
  moreImportantPod,
  type PodDisruptionBudget,
  type PreemptionPolicy,
} from "../../framework/preemption/preemption.ts";
import type { Handle } from "../../framework/runtime/registry.ts";
import { asError, asStatus, Code, isSuccess, newStatus, type Status } from "../../framework/status.ts";
import type { PodInfo } from "../../framework/types.ts";
import type { EventRecorder } from "../../schedule-one.ts";
import { podPriority } from "../queuesort/priority-sort.ts";

export const Name = "DefaultPreemption";

// #region args
/** DefaultPreemptionArgs (apis/config) as a caller may give them: none, or some fields. */
export type DefaultPreemptionArgsInput = Partial<DefaultPreemptionArgs>;

export const defaultPreemptionArgs = (a: DefaultPreemptionArgsInput = {}): DefaultPreemptionArgs => ({
  minCandidateNodesPercentage: a.minCandidateNodesPercentage ?? 10,
  minCandidateNodesAbsolute: a.minCandidateNodesAbsolute ?? 100,
});
// #endregion args

// #region select-victims-core
/** What victim selection may do to the node copy it works on. */
export interface VictimOps {
  /** Take the pod off the node copy (and out of every PreFilter state). */
  removePod(pi: PodInfo): Error | undefined;
  /** Put it back. */
  addPod(pi: PodInfo): Error | undefined;
  /** Filter (with nominated pods) for the preemptor on the node copy as it is now. */
  fits(): Status | undefined;
  /** True when `a` should be kept rather than `b` (higher priority, then longer running). */
  moreImportant(a: Pod, b: Pod): boolean;
  /** The victims whose eviction would break a PDB, and the rest; order kept. */
  splitByPDB(pis: PodInfo[]): [PodInfo[], PodInfo[]];
}

/** The heart of SelectVictimsOnNode, given the pods that may be victims (all removable). */
export type SelectVictimsFunc = (potential: PodInfo[], ops: VictimOps) => [Pod[], number, Status | undefined];

/**
 * selectVictims: remove every potential victim; if the pod still does not fit, this node is
 * no use. Otherwise reprieve — put back one at a time, most important first and PDB violators
 * before the others — every victim the pod can live with; the ones that do not fit stay evicted.
 */
export const selectVictims: SelectVictimsFunc = (potential, ops) => {
  for (const pi of potential) {
    const err = ops.removePod(pi);
    if (err) return [[], 0, asStatus(err)];
  }
  const s = ops.fits();
  if (!isSuccess(s)) return [[], 0, s];
  const sorted = [...potential].sort((a, b) =>
    ops.moreImportant(a.pod, b.pod) ? -1 : ops.moreImportant(b.pod, a.pod) ? 1 : 0,
  );
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
    const fits = reprieve(pi);
    if (fits instanceof Error) return [[], 0, asStatus(fits)];
    if (!fits) numViolating++;
  }
  for (const pi of nonViolating) {
    const fits = reprieve(pi);
    if (fits instanceof Error) return [[], 0, asStatus(fits)];
  }
  // Two passes interleave priorities: sort again, most important first.
  if (violating.length > 0 && nonViolating.length > 0) {
    victims.sort((a, b) => (ops.moreImportant(a, b) ? -1 : ops.moreImportant(b, a) ? 1 : 0));
  }
  return [victims, numViolating, undefined];
};
// #endregion select-victims-core

/** What the binary (or a simulation) plugs in besides args. */
export interface DefaultPreemptionOptions {
  /** The PDBs; absent: none (the API does not serve policy/v1 poddisruptionbudgets yet). */
  pdbLister?: () => PodDisruptionBudget[];
  podLister?: (namespace: string, name: string) => Pod | undefined;
  deleteVictim?: (victim: Pod, condition: PodCondition) => Promise<void>;
  clearNominatedNodeName?: (pods: Pod[]) => Promise<void>;
  recorder?: EventRecorder;
  /** Uniform in [0, 1): the dry run's random offset. */
  rand?: () => number;
  onError?: (err: Error) => void;
  /** The victim selection core (exercise 5.6 swaps in the learner's). */
  selectVictims?: SelectVictimsFunc;
}

export class DefaultPreemption implements PostFilterPlugin, PreemptionPolicy {
  readonly args: DefaultPreemptionArgs;
  readonly evaluator: Evaluator;
  private readonly rand: () => number;
  private readonly select: SelectVictimsFunc;

  constructor(
    args: DefaultPreemptionArgsInput | undefined,
    private readonly fh: Handle,
    o: DefaultPreemptionOptions = {},
  ) {
    this.args = defaultPreemptionArgs(args);
    validateArgs(this.args);
    this.rand = o.rand ?? Math.random;
    this.select = o.selectVictims ?? selectVictims;
    this.evaluator = new Evaluator({
      pluginName: Name,
      handle: fh,
      policy: this,
      podLister: o.podLister,
      pdbLister: o.pdbLister,
      deleteVictim: o.deleteVictim,
      clearNominatedNodeName: o.clearNominatedNodeName,
      recorder: o.recorder,
      onError: o.onError,
    });
  }

  name(): string {
    return Name;
  }

  // #region post-filter
  postFilter(
    state: CycleState,
    pod: Pod,
    m: NodeToStatus,
  ): [PostFilterResult | undefined, Status | undefined] {
    const [result, status] = this.evaluator.preempt(state, pod, m);
    const msg = status?.message() ?? "";
    if (msg.length > 0) {
      const s = newStatus(status!.code, `preemption: ${msg}`);
      return [result, status!.code === Code.Error ? asStatus(new Error(`preemption: ${msg}`)) : s];
    }
    return [result, status];
  }
  // #endregion post-filter

  // #region candidates
  calculateNumCandidates(numNodes: number): number {
    let n = Math.trunc((numNodes * this.args.minCandidateNodesPercentage) / 100);
    if (n < this.args.minCandidateNodesAbsolute) n = this.args.minCandidateNodesAbsolute;
    return Math.min(n, numNodes);
  }

  getOffsetAndNumCandidates(numNodes: number): [number, number] {
    return [Math.floor(this.rand() * numNodes), this.calculateNumCandidates(numNodes)];
  }
  // #endregion candidates

  // #region select-victims
  /** SelectVictimsOnNode: `state` and `nodeInfo` are the dry run's copies. */
  selectVictimsOnNode(
    state: CycleState,
    pod: Pod,
    nodeInfo: NodeInfo,
    pdbs: PodDisruptionBudget[],
  ): [Pod[], number, Status | undefined] {
    const potential = nodeInfo.pods.filter((pi) => podPriority(pi.pod) < podPriority(pod));
    if (potential.length === 0) {
      return [
        [],
        0,
        newStatus(Code.UnschedulableAndUnresolvable, "No preemption victims found for incoming pod"),
      ];
    }
    return this.select(potential, new NodeVictimOps(this.fh, state, pod, nodeInfo, pdbs));
  }
  // #endregion select-victims

  // #region eligible
  /**
   * PodEligibleToPreemptOthers: not with preemptionPolicy Never; not while a lower-priority pod
   * on the node it is already nominated to is terminating because of a preemption — its
   * earlier victims are still leaving, and evicting more would be premature. A nominated node
   * that now rejects the pod outright (UnschedulableAndUnresolvable) frees it to try elsewhere.
   */
  podEligibleToPreemptOthers(pod: Pod, nominatedNodeStatus: Status | undefined): [boolean, string] {
    if (pod.spec.preemptionPolicy === "Never") return [false, "not eligible due to preemptionPolicy=Never."];
    const nomNodeName = pod.status?.nominatedNodeName ?? "";
    if (nomNodeName !== "") {
      if (nominatedNodeStatus?.code === Code.UnschedulableAndUnresolvable) return [true, ""];
      const ni = this.fh.snapshotSharedLister().get(nomNodeName);
      if (!(ni instanceof Error)) {
        for (const pi of ni.pods) {
          if (podPriority(pi.pod) < podPriority(pod) && podTerminatingByPreemption(pi.pod)) {
            return [false, "not eligible due to a terminating pod on the nominated node."];
          }
        }
      }
    }
    return [true, ""];
  }
  // #endregion eligible
}

/**
 * VictimOps on one dry run's copies: the node copy, the cycle state copy, the preemptor. A class
 * rather than an object of arrow functions: the dry run makes one per candidate node (a hundred
 * per preemption), and closures are made — and, under tsx, named — on every call.
 */
class NodeVictimOps implements VictimOps {
  constructor(
    private readonly fh: Handle,
    private readonly state: CycleState,
    private readonly pod: Pod,
    private readonly nodeInfo: NodeInfo,
    private readonly pdbs: PodDisruptionBudget[],
  ) {}

  private readonly now = (): number => this.fh.clock.now();

  removePod(pi: PodInfo): Error | undefined {
    const err = this.nodeInfo.removePod(pi.pod);
    if (err) return err;
    return asError(this.fh.runPreFilterExtensionRemovePod(this.state, this.pod, pi, this.nodeInfo));
  }

  addPod(pi: PodInfo): Error | undefined {
    this.nodeInfo.addPodInfo(pi);
    return asError(this.fh.runPreFilterExtensionAddPod(this.state, this.pod, pi, this.nodeInfo));
  }

  fits(): Status | undefined {
    return this.fh.runFilterPluginsWithNominatedPods(this.state, this.pod, this.nodeInfo);
  }

  moreImportant(a: Pod, b: Pod): boolean {
    return moreImportantPod(a, b, this.now);
  }

  splitByPDB(pis: PodInfo[]): [PodInfo[], PodInfo[]] {
    return filterPodsWithPDBViolation(pis, this.pdbs);
  }
}

/** podTerminatingByPreemption: being deleted, and marked DisruptionTarget by the scheduler. */
export function podTerminatingByPreemption(p: Pod): boolean {
  if (!p.metadata.deletionTimestamp) return false;
  const c = (p.status?.conditions ?? []).find((c) => c.type === "DisruptionTarget");
  return c !== undefined && c.status === "True" && c.reason === "PreemptionByScheduler";
}

// #region pdb
/**
 * filterPodsWithPDBViolation: walking the pods in order, each matching PDB's
 * status.disruptionsAllowed is spent one pod at a time; a pod that drives any budget below
 * zero is violating. A pod already in a PDB's disruptedPods was counted by the API server.
 */
export function filterPodsWithPDBViolation(
  podInfos: PodInfo[],
  pdbs: PodDisruptionBudget[],
): [PodInfo[], PodInfo[]] {
  const allowed = pdbs.map((pdb) => pdb.status?.disruptionsAllowed ?? 0);
  const violating: PodInfo[] = [];
  const nonViolating: PodInfo[] = [];
  for (const pi of podInfos) {
    const pod = pi.pod;
    let violated = false;
    const labels = pod.metadata.labels ?? {};
    if (Object.keys(labels).length > 0) {
      for (const [i, pdb] of pdbs.entries()) {
        if (pdb.metadata.namespace !== pod.metadata.namespace) continue;
        const sel = labelSelectorAsSelector(pdb.spec.selector);
        // An invalid selector matches nothing; so does a nil or empty one for a PDB.
        if (!sel.ok || sel.value.requirements.length === 0 || !selectorMatches(sel.value, labels)) continue;
        if (pdb.status?.disruptedPods?.[pod.metadata.name ?? ""] !== undefined) continue;
        allowed[i]--;
        if (allowed[i] < 0) violated = true;
      }
    }
    (violated ? violating : nonViolating).push(pi);
  }
  return [violating, nonViolating];
}
// #endregion pdb

function validateArgs(a: Required<DefaultPreemptionArgs>): void {
  if (a.minCandidateNodesPercentage < 0 || a.minCandidateNodesPercentage > 100) {
    throw new Error(
      `minCandidateNodesPercentage: Invalid value: ${a.minCandidateNodesPercentage}: not in valid range [0, 100]`,
    );
  }
  if (a.minCandidateNodesAbsolute < 0) {
    throw new Error(
      `minCandidateNodesAbsolute: Invalid value: ${a.minCandidateNodesAbsolute}: not in valid range [0, inf)`,
    );
  }
  if (a.minCandidateNodesPercentage === 0 && a.minCandidateNodesAbsolute === 0) {
    throw new Error("minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero");
  }
}
