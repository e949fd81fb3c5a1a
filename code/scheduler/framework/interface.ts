/**
 * Framework interfaces — the plugin contracts the scheduling queue depends on: a plugin's name,
 * PreEnqueue, QueueSort's less function, EnqueueExtensions, and the nominator.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/interface.go (Plugin, PreEnqueuePlugin, QueueSortPlugin, LessFunc, EnqueueExtensions, PodNominator, NominatingInfo, NominatingMode)
 * @chapter 05-scheduler
 *
 * Solves: the queue runs plugin code (gates, ordering, hints) but must not depend on the
 * framework runtime that builds profiles — so it sees plugins only through these interfaces.
 * The other extension points (PreFilter … PostBind) join this file with the framework.
 *
 * Invariants:
 * - a PreEnqueue plugin returns `undefined` (Success) to let a pod into activeQ; anything
 *   else keeps it in unschedulablePods as gated until the pod itself is updated.
 * - `LessFunc(a, b)` is a strict order: true when `a` must be scheduled before `b`.
 */
import type { Pod } from "../../api/core.ts";
import type { ClusterEventWithHint } from "./events.ts";
import type { Status } from "./status.ts";
import type { PodInfo, QueuedPodInfo } from "./types.ts";

export interface Plugin {
  name(): string;
}

/** PreEnqueue: runs before a pod enters activeQ; a non-success keeps it out (SchedulingGates). */
export interface PreEnqueuePlugin extends Plugin {
  preEnqueue(pod: Pod): Status | undefined;
}

/** LessFunc: the QueueSort plugin's order of activeQ. */
export type LessFunc = (a: QueuedPodInfo, b: QueuedPodInfo) => boolean;

export interface QueueSortPlugin extends Plugin {
  less: LessFunc;
}

/** EnqueueExtensions: the events after which a pod this plugin rejected may be schedulable. */
export interface EnqueueExtensions extends Plugin {
  eventsToRegister(): ClusterEventWithHint[];
}

// #region nominating-info
export enum NominatingMode {
  /** Keep whatever nomination the pod already has (status.nominatedNodeName). */
  ModeNoop = 0,
  /** Set (or clear, with "") the nomination to `nominatedNodeName`. */
  ModeOverride = 1,
}

export interface NominatingInfo {
  nominatedNodeName: string;
  nominatingMode: NominatingMode;
}

export const nominatingModeOf = (ni: NominatingInfo | undefined): NominatingMode =>
  ni?.nominatingMode ?? NominatingMode.ModeNoop;
// #endregion nominating-info

/** PodNominator: who is nominated to which node (by preemption), so Filter counts them there. */
export interface PodNominator {
  addNominatedPod(pi: PodInfo, nominatingInfo?: NominatingInfo): void;
  deleteNominatedPodIfExists(pod: Pod): void;
  updateNominatedPod(oldPod: Pod, newPodInfo: PodInfo): void;
  nominatedPodsForNode(nodeName: string): PodInfo[];
}
