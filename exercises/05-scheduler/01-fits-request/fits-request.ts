/**
 * Exercise: NodeResourcesFit's Filter — does the pod fit in what the node's pods leave of its
 * allocatable? First the pod's request (containers summed, each init container a floor, plus the
 * overhead), then one reason per shortfall. README.md has the rules.
 */
import type { Pod } from "../../../code/api/core.ts";
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import { Resource } from "../../../code/scheduler/framework/types.ts";

/** One shortfall: `reason` is what FailedScheduling counts ("Insufficient cpu", "Too many pods"). */
export interface InsufficientResource {
  resourceName: string;
  reason: string;
  requested: number;
  used: number;
  capacity: number;
}

/** computePodResourceRequest: what the pod asks of a node (init containers without restartPolicy). */
export function computePodResourceRequest(pod: Pod): Resource {
  throw new Error(`TODO: computePodResourceRequest — what does ${pod.metadata.name} ask for?`);
}

/** fitsRequest: every shortfall of `nodeInfo` for `podRequest`, pods first; none: it fits. */
export function fitsRequest(podRequest: Resource, nodeInfo: NodeInfo): InsufficientResource[] {
  void Resource;
  throw new Error(`TODO: fitsRequest — does ${podRequest.milliCPU}m CPU fit on ${nodeInfo.nodeName()}?`);
}
