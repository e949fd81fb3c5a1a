/**
 * Preemption Evaluator — what a PostFilter does when no node fits: find nodes where evicting
 * lower-priority pods would make room, dry-run the eviction on copies, pick the node whose
 * victims cost least, evict them and nominate the pod there.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/preemption/preemption.go (Candidate, Interface, Evaluator, NewEvaluator, PreemptPod, Preempt, findCandidates, DryRunPreemption, SelectCandidate, prepareCandidate, pickOneNodeForPreemption, getLowerPriorityNominatedPods, getPodDisruptionBudgets)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/types.go (NodeToStatus.NodesForStatusCode)
 * @upstream kubernetes/kubernetes pkg/scheduler/util/utils.go (GetPodStartTime, GetEarliestPodStartTime, MoreImportantPod)
 * @chapter 05-scheduler
 *
 * Solves: a high-priority pod must not wait for room that low-priority pods hold, but evicting
 * is expensive and visible — so the evaluator evicts as few and as unimportant pods as it can,
 * on one node, and says so (a nomination) rather than binding: the victims need time to stop.
 *
 * Invariants:
 * - only nodes whose Filter status is Unschedulable are tried: UnschedulableAndUnresolvable
 *   means evicting pods cannot help there (a taint, a selector).
 * - every dry run works on a copy of the cycle state and of the node: the real snapshot and
 *   state are never changed by a "what if".
 * - the dry run stops once it has `numCandidates` candidates and at least one of them violates
 *   no PodDisruptionBudget; candidates that violate none come first.
 * - pickOneNodeForPreemption applies its criteria in order, each only to break the previous
 *   one's ties; remaining ties go to the first candidate (in dry-run order from the random offset).
 * - a victim that is a waiting pod (Permit) is rejected, not deleted; the others get a
 *   DisruptionTarget condition and a graceful delete, and a `Preempted` event.
 */
import type { Pod, PodCondition } from "../../../api/core.ts";
import type { LabelSelector } from "../../../api/labels.ts";
import { isNotFound } from "../../../client/errors.ts";
import type { Clientset } from "../../../client/kubernetes/clientset.ts";
import { MergePatchType } from "../../../client/rest/request.ts";
import { podPriority } from "../../plugins/queuesort/priority-sort.ts";
import type { EventRecorder } from "../../schedule-one.ts";
import type { CycleState } from "../cycle-state.ts";
import { Diagnosis, FitError, type NodeToStatus } from "../diagnosis.ts";
import { NominatingMode, type PostFilterResult } from "../interface.ts";
import type { NodeInfo } from "../node-info.ts";
import type { Handle } from "../runtime/registry.ts";
import { asError, asStatus, Code, isSuccess, newStatus, type Status } from "../status.ts";

// #region types
/** policy/v1 PodDisruptionBudget — the fields preemption reads. */
export interface PodDisruptionBudget {
  metadata: { name?: string; namespace?: string };
  spec: { selector?: LabelSelector | null; minAvailable?: number | string; maxUnavailable?: number | string };
  status?: { disruptionsAllowed?: number; disruptedPods?: Record<string, string> };
}

/** Victims: the pods to evict on one node (most important first) and how many PDBs that breaks. */
export interface Victims {
  pods: Pod[];
  numPDBViolations: number;
}

/** Candidate: a node where the pod fits once `victims` are gone. */
export interface Candidate {
  name: string;
  victims: Victims;
}

/** The policy half a preemption plugin supplies; the Evaluator is the mechanism around it. */
export interface PreemptionPolicy {
  /** A random offset into the potential nodes and how many candidates to look for. */
  getOffsetAndNumCandidates(numNodes: number): [number, number];
  podEligibleToPreemptOthers(pod: Pod, nominatedNodeStatus: Status | undefined): [boolean, string];
  /** Works on copies it may change; returns the victims (most important first), PDB violations, status. */
  selectVictimsOnNode(
    state: CycleState,
    pod: Pod,
    nodeInfo: NodeInfo,
    pdbs: PodDisruptionBudget[],
  ): [Pod[], number, Status | undefined];
  /** Custom node order for SelectCandidate; undefined: the default criteria. */
  orderedScoreFuncs?(nodesToVictims: Map<string, Victims>): ((node: string) => number)[] | undefined;
}

export interface EvaluatorOptions {
  pluginName: string;
  handle: Handle;
  policy: PreemptionPolicy;
  /** The informer's current copy of a pod; default: the pod PostFilter was given. */
  podLister?: (namespace: string, name: string) => Pod | undefined;
  /** Every PDB (the policy/v1 lister); default: none. */
  pdbLister?: () => PodDisruptionBudget[];
  /** Marks and deletes one victim; default: through `handle.clientSet()`. */
  deleteVictim?: (victim: Pod, condition: PodCondition) => Promise<void>;
  /** Clears status.nominatedNodeName of these pods; default: through `handle.clientSet()`. */
  clearNominatedNodeName?: (pods: Pod[]) => Promise<void>;
  recorder?: EventRecorder;
  onError?: (err: Error) => void;
}
// #endregion types

export class Evaluator {
  /** The API calls started by the last preemptions (tests await them). */
  readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly o: EvaluatorOptions) {}

  // #region preempt
  /**
   * Preempt: the PostFilter's result. [undefined, Unschedulable]: not eligible now (keep any
   * nomination); [clear, Unschedulable]: preemption cannot help; [node, Success]: victims are
   * being evicted and the pod is nominated to `node`.
   */
  preempt(
    state: CycleState,
    podIn: Pod,
    m: NodeToStatus,
  ): [PostFilterResult | undefined, Status | undefined] {
    const pod = this.o.podLister
      ? this.o.podLister(podIn.metadata.namespace ?? "", podIn.metadata.name ?? "")
      : podIn;
    if (!pod) return [undefined, asStatus(new Error(`pod "${podIn.metadata.name}" not found`))];

    const nominatedNodeStatus = m.get(pod.status?.nominatedNodeName ?? "");
    const [eligible, msg] = this.o.policy.podEligibleToPreemptOthers(pod, nominatedNodeStatus);
    if (!eligible) return [undefined, newStatus(Code.Unschedulable, msg)];

    const allNodes = this.o.handle.snapshotSharedLister().list();
    const found = this.findCandidates(state, allNodes, pod, m);
    const [candidates, nodeToStatus, err] = found;
    if (err && candidates.length === 0) return [undefined, asStatus(err)];

    if (candidates.length === 0) {
      const d = new Diagnosis();
      d.nodeToStatus = nodeToStatus;
      d.nodeToStatus.setAbsentNodesStatus(
        newStatus(Code.UnschedulableAndUnresolvable, "Preemption is not helpful for scheduling"),
      );
      const fitError = new FitError(pod, allNodes.length, d);
      return [clearNomination(), newStatus(Code.Unschedulable, fitError.message)];
    }

    const best = this.selectCandidate(candidates);
    if (!best || best.name === "")
      return [undefined, newStatus(Code.Unschedulable, "no candidate node for preemption")];

    this.prepareCandidate(best, pod);
    return [
      { nominatingInfo: { nominatedNodeName: best.name, nominatingMode: NominatingMode.ModeOverride } },
      undefined,
    ];
  }
  // #endregion preempt

  // #region find-candidates
  findCandidates(
    state: CycleState,
    allNodes: NodeInfo[],
    pod: Pod,
    m: NodeToStatus,
  ): [Candidate[], NodeToStatus, Error | undefined] {
    if (allNodes.length === 0) return [[], m, new Error("no nodes available")];
    const potentialNodes = nodesForStatusCode(m, allNodes, Code.Unschedulable);
    if (potentialNodes.length === 0) return [[], new Diagnosis().nodeToStatus, undefined];
    const pdbs = this.o.pdbLister?.() ?? [];
    const [offset, numCandidates] = this.o.policy.getOffsetAndNumCandidates(potentialNodes.length);
    return this.dryRunPreemption(state, pod, potentialNodes, pdbs, offset, numCandidates);
  }

  /**
   * DryRunPreemption: SelectVictimsOnNode on a copy of each potential node, from `offset` round
   * the list. Upstream runs the nodes in parallel and cancels; sequentially the same stopping
   * rule is "enough candidates, one of them PDB-clean".
   */
  dryRunPreemption(
    state: CycleState,
    pod: Pod,
    potentialNodes: NodeInfo[],
    pdbs: PodDisruptionBudget[],
    offset: number,
    numCandidates: number,
  ): [Candidate[], NodeToStatus, Error | undefined] {
    const nonViolating: Candidate[] = [];
    const violating: Candidate[] = [];
    const nodeStatuses = new Diagnosis().nodeToStatus;
    const errs: Error[] = [];
    for (let i = 0; i < potentialNodes.length; i++) {
      if (nonViolating.length > 0 && nonViolating.length + violating.length >= numCandidates) break;
      const nodeInfoCopy = potentialNodes[(offset + i) % potentialNodes.length].snapshot();
      const name = nodeInfoCopy.nodeName();
      const [pods, numPDBViolations, s] = this.o.policy.selectVictimsOnNode(
        state.clone(),
        pod,
        nodeInfoCopy,
        pdbs,
      );
      let status = s;
      if (isSuccess(status) && pods.length > 0) {
        const list = numPDBViolations === 0 ? nonViolating : violating;
        if (list.length < numCandidates) list.push({ name, victims: { pods, numPDBViolations } });
        continue;
      }
      if (isSuccess(status))
        status = asStatus(new Error(`expected at least one victim pod on node "${name}"`));
      if (status!.code === Code.Error) errs.push(asError(status)!);
      nodeStatuses.set(name, status!);
    }
    const err = errs.length > 0 ? new Error(errs.map((e) => e.message).join(", ")) : undefined;
    return [[...nonViolating, ...violating], nodeStatuses, err];
  }
  // #endregion find-candidates

  // #region select-candidate
  selectCandidate(candidates: Candidate[]): Candidate | undefined {
    if (candidates.length === 0) return undefined;
    if (candidates.length === 1) return candidates[0];
    const victimsMap = new Map(candidates.map((c) => [c.name, c.victims]));
    const scoreFuncs = this.o.policy.orderedScoreFuncs?.(victimsMap);
    const node = pickOneNodeForPreemption(victimsMap, scoreFuncs, () => this.o.handle.clock.now());
    const victims = victimsMap.get(node);
    return victims ? { name: node, victims } : candidates[0];
  }
  // #endregion select-candidate

  // #region prepare-candidate
  /**
   * prepareCandidate: evict the victims and clear lower-priority nominations on the node.
   * Upstream (synchronous mode) waits for the API calls inside the cycle, and a failed eviction
   * fails PostFilter, so the preemptor is retried after its backoff. This cycle is synchronous, so
   * the calls run in the background (`inFlight`); a failed eviction is logged and the preemptor
   * activated, to the same end: it tries again rather than wait for a deletion that never comes.
   */
  prepareCandidate(c: Candidate, pod: Pod): void {
    for (const victim of c.victims.pods) {
      // Graceful deletion already under way: another call changes nothing.
      if (victim.metadata.deletionTimestamp) continue;
      this.track(this.preemptPod(c, pod, victim), () => this.o.handle.activate?.([pod]));
    }
    const nominated = getLowerPriorityNominatedPods(this.o.handle, pod, c.name);
    if (nominated.length > 0) this.track(this.clearNominated(nominated));
  }

  private async preemptPod(c: Candidate, preemptor: Pod, victim: Pod): Promise<void> {
    const wp = this.o.handle.getWaitingPod(victim.metadata.uid ?? "");
    if (wp) {
      wp.reject(this.o.pluginName, "preempted");
    } else {
      const condition: PodCondition = {
        type: "DisruptionTarget",
        status: "True",
        reason: "PreemptionByScheduler",
        message: `${preemptor.spec.schedulerName ?? "default-scheduler"}: preempting to accommodate a higher priority pod`,
      };
      const del =
        this.o.deleteVictim ?? ((v, cond) => deleteThroughClient(this.o.handle.clientSet(), v, cond));
      await del(victim, condition);
    }
    this.o.recorder?.eventf(
      victim,
      "Normal",
      "Preempted",
      "Preempting",
      `Preempted by pod ${preemptor.metadata.uid} on node ${c.name}`,
    );
  }

  private clearNominated(pods: Pod[]): Promise<void> {
    if (this.o.clearNominatedNodeName) return this.o.clearNominatedNodeName(pods);
    return clearThroughClient(this.o.handle.clientSet(), pods);
  }

  private track(p: Promise<void>, onFailure?: () => void): void {
    const q = p.catch((e: Error) => {
      this.o.onError?.(e);
      onFailure?.();
    });
    this.inFlight.add(q);
    void q.finally(() => this.inFlight.delete(q));
  }

  /** Resolves when every API call started so far has ended. */
  async wait(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
  // #endregion prepare-candidate
}

const clearNomination = (): PostFilterResult => ({
  nominatingInfo: { nominatedNodeName: "", nominatingMode: NominatingMode.ModeOverride },
});

/** NodesForStatusCode: the nodes whose status (explicit, or the absent nodes') has `code`. */
export function nodesForStatusCode(m: NodeToStatus, allNodes: NodeInfo[], code: Code): NodeInfo[] {
  return allNodes.filter((n) => m.get(n.nodeName()).code === code);
}

/** getLowerPriorityNominatedPods: nominated to `nodeName` below the preemptor's priority. */
export function getLowerPriorityNominatedPods(handle: Handle, pod: Pod, nodeName: string): Pod[] {
  const infos = handle.podNominator()?.nominatedPodsForNode(nodeName) ?? [];
  return infos.map((pi) => pi.pod).filter((p) => podPriority(p) < podPriority(pod));
}

// #region pick-one-node
/** GetPodStartTime: status.startTime, or now for a pod not started yet. */
export function podStartTime(pod: Pod, now: () => number): number {
  const t = pod.status?.startTime ? Date.parse(pod.status.startTime) : Number.NaN;
  return Number.isNaN(t) ? now() : t;
}

/** MoreImportantPod: higher priority; at equal priority, the one running longer. */
export function moreImportantPod(a: Pod, b: Pod, now: () => number): boolean {
  const pa = podPriority(a);
  const pb = podPriority(b);
  if (pa !== pb) return pa > pb;
  return podStartTime(a, now) < podStartTime(b, now);
}

/** GetEarliestPodStartTime: the earliest start among the highest-priority victims. */
export function earliestPodStartTime(v: Victims, now: () => number): number | undefined {
  if (v.pods.length === 0) return undefined;
  let maxPriority = podPriority(v.pods[0]);
  let earliest = podStartTime(v.pods[0], now);
  for (const p of v.pods) {
    const pr = podPriority(p);
    if (pr === maxPriority) earliest = Math.min(earliest, podStartTime(p, now));
    else if (pr > maxPriority) {
      maxPriority = pr;
      earliest = podStartTime(p, now);
    }
  }
  return earliest;
}

const MaxInt32 = 2 ** 31 - 1;

/**
 * pickOneNodeForPreemption: each score function keeps the nodes with its highest score; the
 * next one runs only on a tie. Default order: fewest PDB violations, lowest highest-priority
 * victim, smallest sum of priorities, fewest victims, latest start of the most important victims.
 */
export function pickOneNodeForPreemption(
  nodesToVictims: Map<string, Victims>,
  scoreFuncs: ((node: string) => number)[] | undefined,
  now: () => number,
): string {
  if (nodesToVictims.size === 0) return "";
  const v = (node: string) => nodesToVictims.get(node)!;
  const funcs =
    scoreFuncs && scoreFuncs.length > 0
      ? scoreFuncs
      : [
          (node: string) => -v(node).numPDBViolations,
          (node: string) => -podPriority(v(node).pods[0]),
          // + MaxInt32 + 1 makes each term ≥ 0: three pods at -10 must not beat one pod at -10.
          (node: string) => -v(node).pods.reduce((sum, p) => sum + podPriority(p) + MaxInt32 + 1, 0),
          (node: string) => -v(node).pods.length,
          (node: string) => earliestPodStartTime(v(node), now) ?? Number.MIN_SAFE_INTEGER,
        ];
  let candidates = [...nodesToVictims.keys()];
  for (const f of funcs) {
    let best = Number.NEGATIVE_INFINITY;
    let selected: string[] = [];
    for (const node of candidates) {
      const score = f(node);
      if (score > best) {
        best = score;
        selected = [];
      }
      if (score === best) selected.push(node);
    }
    if (selected.length === 1) return selected[0];
    candidates = selected;
  }
  return candidates[0];
}
// #endregion pick-one-node

// #region api-calls
/** The binary's way: patch the DisruptionTarget condition, then delete with the pod's own grace period. */
async function deleteThroughClient(
  cs: Clientset | undefined,
  victim: Pod,
  condition: PodCondition,
): Promise<void> {
  if (!cs) throw new Error("preemption: no client to delete victims with");
  const ns = victim.metadata.namespace ?? "";
  const name = victim.metadata.name ?? "";
  const conditions = [
    ...(victim.status?.conditions ?? []).filter((c) => c.type !== condition.type),
    condition,
  ];
  try {
    // A merge patch replaces the list: send every condition, ours replacing any older one.
    await cs.coreV1.pods(ns).patch(name, MergePatchType, { status: { conditions } }, {}, "status");
    // No gracePeriodSeconds: the server applies the pod's terminationGracePeriodSeconds.
    await cs.coreV1.pods(ns).delete(name, {});
  } catch (e) {
    // Already gone: nothing left to preempt.
    if (isNotFound(e)) return;
    throw e;
  }
}

async function clearThroughClient(cs: Clientset | undefined, pods: Pod[]): Promise<void> {
  if (!cs) throw new Error("preemption: no client to clear nominations with");
  const errs: Error[] = [];
  for (const p of pods) {
    if (!p.status?.nominatedNodeName) continue;
    try {
      await cs.coreV1
        .pods(p.metadata.namespace ?? "")
        .patch(p.metadata.name ?? "", MergePatchType, { status: { nominatedNodeName: null } }, {}, "status");
    } catch (e) {
      errs.push(e as Error);
    }
  }
  if (errs.length > 0) throw new Error(errs.map((e) => e.message).join(", "));
}
// #endregion api-calls
