// Mistake: a pod that requests nothing returns "fits" at once, before the pod count is checked.
// Plausible: "nothing requested, nothing to check" is a real shortcut upstream — but it comes
// after the pod-count check. Skip that and a node at its `pods` limit keeps accepting BestEffort
// pods the kubelet will then refuse to run.
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import type { Resource } from "../../../code/scheduler/framework/types.ts";
import { fitsRequest as correct, type InsufficientResource } from "./fits-request.ts";

export { computePodResourceRequest, type InsufficientResource } from "./fits-request.ts";

export function fitsRequest(podRequest: Resource, nodeInfo: NodeInfo): InsufficientResource[] {
  const none =
    podRequest.milliCPU === 0 &&
    podRequest.memory === 0 &&
    podRequest.ephemeralStorage === 0 &&
    podRequest.scalarResources.size === 0;
  if (none) return [];
  return correct(podRequest, nodeInfo);
}
