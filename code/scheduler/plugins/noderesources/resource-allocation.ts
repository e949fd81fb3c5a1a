/**
 * resourceAllocationScorer — the shared half of the resource Score plugins: for each configured
 * resource, what the node could offer and what it would hold with this pod, fed to a scorer
 * (LeastAllocated, BalancedAllocation).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/resource_allocation.go (resourceAllocationScorer, score, calculateResourceAllocatableRequest, calculatePodResourceRequestList, isBestEffortPod)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/defaults.go (defaultResourceSpec)
 * @chapter 05-scheduler
 *
 * Solves: two plugins ask "how full would this node be?" in the same units; computing it once,
 * the same way, keeps LeastAllocated and BalancedAllocation consistent.
 *
 * Invariants:
 * - `useRequested` false (LeastAllocated): node and pod counted with the non-zero defaults
 *   (100m CPU / 200Mi per container without a request), so request-less pods still spread;
 *   true (BalancedAllocation): the real requests.
 * - an extended resource the pod does not request, or a resource the node does not have
 *   (allocatable 0), is left out of the score (allocatable and requested 0).
 */
import type { Pod } from "../../../api/core.ts";
import type { ResourceSpec } from "../../apis/config/types-pluginargs.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { isScalarResourceName, podRequests, type Resource } from "../../framework/types.ts";

/** The default `resources` of NodeResourcesFit's scoring strategy and of BalancedAllocation. */
export const defaultResourceSpec: ResourceSpec[] = [
  { name: "cpu", weight: 1 },
  { name: "memory", weight: 1 },
];

export type Scorer = (requested: number[], allocatable: number[], resources: ResourceSpec[]) => number;

function amountOf(r: Resource, name: string): number {
  switch (name) {
    case "cpu":
      return r.milliCPU;
    case "memory":
      return r.memory;
    case "ephemeral-storage":
      return r.ephemeralStorage;
    default:
      return r.scalarResources.get(name) ?? 0;
  }
}

// #region scorer
export class ResourceAllocationScorer {
  constructor(
    readonly name: string,
    readonly scorer: Scorer,
    readonly useRequested: boolean,
    readonly resources: ResourceSpec[] = defaultResourceSpec,
  ) {}

  /** calculatePodResourceRequestList: the pod's request per configured resource. */
  podRequestList(pod: Pod): number[] {
    const reqs = podRequests(pod, !this.useRequested);
    return this.resources.map((r) => amountOf(reqs, r.name));
  }

  /** isBestEffortPod: the pod requests none of the configured resources. */
  isBestEffortPod(podRequests: number[]): boolean {
    return podRequests.every((v) => v === 0);
  }

  score(nodeInfo: NodeInfo, podRequests: number[]): number {
    const requested: number[] = new Array(this.resources.length).fill(0);
    const allocatable: number[] = new Array(this.resources.length).fill(0);
    const nodeRequested = this.useRequested ? nodeInfo.requested : nodeInfo.nonZeroRequested;
    for (const [i, r] of this.resources.entries()) {
      // An extended resource the pod does not ask for says nothing about this pod's fit.
      if (podRequests[i] === 0 && isScalarResourceName(r.name)) continue;
      const alloc = amountOf(nodeInfo.allocatable, r.name);
      if (alloc === 0) continue;
      allocatable[i] = alloc;
      // nodeplugins: the non-zero defaults exist for CPU and memory only; ephemeral storage and
      // extended resources are always the node's real requests (upstream's default branch).
      const onNode = r.name === "cpu" || r.name === "memory" ? nodeRequested : nodeInfo.requested;
      requested[i] = amountOf(onNode, r.name) + podRequests[i];
    }
    return this.scorer(requested, allocatable, this.resources);
  }
}
// #endregion scorer
