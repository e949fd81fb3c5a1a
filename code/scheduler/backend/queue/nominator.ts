/**
 * Nominator — which pods preemption nominated to which node, so that the next cycles count
 * them there before they are bound.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/queue/nominator.go (nominator, AddNominatedPod, DeleteNominatedPodIfExists, UpdateNominatedPod, NominatedPodsForNode)
 * @chapter 05-scheduler
 *
 * Solves: preemption evicts victims on node N for pod P, then P waits for them to go. Without a
 * record of "P is headed for N", the next pod in the queue would see N's freed room and take it,
 * and P's victims would have died for nothing. Filter runs with nominated pods of equal or
 * higher priority added to the node.
 *
 * Invariants:
 * - a pod is nominated to at most one node: `nominatedPodToNode` and `nominatedPods` agree.
 * - a pod that is gone or already bound (per `podLister`, when given) is not nominated.
 */
import type { Pod } from "../../../api/core.ts";
import {
  type NominatingInfo,
  NominatingMode,
  nominatingModeOf,
  type PodNominator,
} from "../../framework/interface.ts";
import type { PodInfo } from "../../framework/types.ts";

/** Looks a pod up by namespace and name in the informer's cache (the pod lister). */
export type PodLister = (namespace: string, name: string) => Pod | undefined;

const nominatedNodeName = (pod: Pod): string => pod.status?.nominatedNodeName ?? "";
const uidOf = (pod: Pod): string => pod.metadata.uid ?? "";

export class Nominator implements PodNominator {
  /** node name → the pods nominated to it, in nomination order. */
  private readonly nominatedPods = new Map<string, PodInfo[]>();
  /** pod UID → node name. */
  private readonly nominatedPodToNode = new Map<string, string>();

  constructor(private readonly podLister?: PodLister) {}

  // #region add-nominated
  addNominatedPod(pi: PodInfo, nominatingInfo?: NominatingInfo): void {
    // Delete first, so a pod is never stored twice (a re-nomination moves it).
    this.deleteNominatedPodIfExists(pi.pod);
    let nodeName: string;
    if (nominatingModeOf(nominatingInfo) === NominatingMode.ModeOverride) {
      nodeName = nominatingInfo?.nominatedNodeName ?? "";
    } else {
      nodeName = nominatedNodeName(pi.pod);
    }
    if (nodeName === "") return;
    if (this.podLister) {
      const current = this.podLister(pi.pod.metadata.namespace ?? "", pi.pod.metadata.name ?? "");
      // Deleted, or bound meanwhile: a nomination would reserve room for nobody.
      if (!current || current.spec.nodeName) return;
    }
    this.nominatedPodToNode.set(uidOf(pi.pod), nodeName);
    const list = this.nominatedPods.get(nodeName) ?? [];
    if (!list.some((p) => uidOf(p.pod) === uidOf(pi.pod))) list.push(pi);
    this.nominatedPods.set(nodeName, list);
  }
  // #endregion add-nominated

  deleteNominatedPodIfExists(pod: Pod): void {
    const uid = uidOf(pod);
    const nodeName = this.nominatedPodToNode.get(uid);
    if (nodeName === undefined) return;
    const rest = (this.nominatedPods.get(nodeName) ?? []).filter((p) => uidOf(p.pod) !== uid);
    if (rest.length === 0) this.nominatedPods.delete(nodeName);
    else this.nominatedPods.set(nodeName, rest);
    this.nominatedPodToNode.delete(uid);
  }

  // #region update-nominated
  updateNominatedPod(oldPod: Pod, newPodInfo: PodInfo): void {
    let info: NominatingInfo | undefined;
    // An update that carries no nomination can arrive right after preemption nominated the pod
    // in memory (the status write is still on its way): keep the in-memory nomination then.
    // Adding, changing or removing status.nominatedNodeName is honoured as the update says.
    if (nominatedNodeName(oldPod) === "" && nominatedNodeName(newPodInfo.pod) === "") {
      const nnn = this.nominatedPodToNode.get(uidOf(oldPod));
      if (nnn !== undefined) info = { nominatingMode: NominatingMode.ModeOverride, nominatedNodeName: nnn };
    }
    this.deleteNominatedPodIfExists(oldPod);
    this.addNominatedPod(newPodInfo, info);
  }
  // #endregion update-nominated

  nominatedPodsForNode(nodeName: string): PodInfo[] {
    return [...(this.nominatedPods.get(nodeName) ?? [])];
  }

  /** The node a pod is nominated to, if any (for tests and debugging). */
  nominatedNodeOf(pod: Pod): string | undefined {
    return this.nominatedPodToNode.get(uidOf(pod));
  }
}
