/**
 * Solution: NodeResourcesFit's Filter — the pod's request, and its shortfalls on one node.
 * (Upstream: pkg/scheduler/framework/plugins/noderesources/fit.go, fitsRequest and
 * computePodResourceRequest; pkg/api/v1/resource/helpers.go, PodRequests.)
 */
import type { Pod } from "../../../code/api/core.ts";
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import { Resource } from "../../../code/scheduler/framework/types.ts";

export interface InsufficientResource {
  resourceName: string;
  reason: string;
  requested: number;
  used: number;
  capacity: number;
}

function maxInto(into: Resource, o: Resource): void {
  into.milliCPU = Math.max(into.milliCPU, o.milliCPU);
  into.memory = Math.max(into.memory, o.memory);
  into.ephemeralStorage = Math.max(into.ephemeralStorage, o.ephemeralStorage);
  for (const [name, v] of o.scalarResources) {
    into.scalarResources.set(name, Math.max(into.scalarResources.get(name) ?? 0, v));
  }
}

export function computePodResourceRequest(pod: Pod): Resource {
  const reqs = new Resource();
  // Containers run together: their requests add up.
  for (const c of pod.spec.containers ?? []) reqs.add(c.resources?.requests);
  // Init containers run one at a time, before the others: each is a floor, not an addition.
  for (const c of pod.spec.initContainers ?? []) maxInto(reqs, Resource.fromList(c.resources?.requests));
  // The runtime's own cost of the pod (a VM-based sandbox) is counted on top.
  reqs.add((pod.spec as { overhead?: Record<string, string> }).overhead);
  return reqs;
}

export function fitsRequest(podRequest: Resource, nodeInfo: NodeInfo): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  const alloc = nodeInfo.allocatable;
  const used = nodeInfo.requested;
  // Every pod takes a slot, even one that requests nothing: checked first, always.
  if (nodeInfo.pods.length + 1 > alloc.allowedPodNumber) {
    out.push({
      resourceName: "pods",
      reason: "Too many pods",
      requested: 1,
      used: nodeInfo.pods.length,
      capacity: alloc.allowedPodNumber,
    });
  }
  const check = (name: string, req: number, u: number, cap: number) => {
    // A resource the pod does not ask for cannot be short, however full the node is.
    if (req > 0 && req > cap - u) {
      out.push({
        resourceName: name,
        reason: `Insufficient ${name}`,
        requested: req,
        used: u,
        capacity: cap,
      });
    }
  };
  check("cpu", podRequest.milliCPU, used.milliCPU, alloc.milliCPU);
  check("memory", podRequest.memory, used.memory, alloc.memory);
  check("ephemeral-storage", podRequest.ephemeralStorage, used.ephemeralStorage, alloc.ephemeralStorage);
  for (const [name, req] of podRequest.scalarResources) {
    check(name, req, used.scalarResources.get(name) ?? 0, alloc.scalarResources.get(name) ?? 0);
  }
  return out;
}
