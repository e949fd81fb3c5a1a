/**
 * NodeInfo — one node and the sums over the pods on it (requested resources, host ports, pods
 * with affinity), kept up to date pod by pod.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/types.go (NodeInfo, NewNodeInfo, AddPodInfo, RemovePod, SetNode, RemoveNode, Snapshot, nextGeneration)
 * @chapter 05-scheduler
 *
 * Solves: a Filter asks "does this pod fit here?" for every node in every cycle. Summing the
 * node's pods each time would cost pods × nodes per cycle; NodeInfo keeps the sums and changes
 * them by one pod at a time, so each question is a comparison.
 *
 * Invariants:
 * - `requested` is the sum of `podRequests` over `pods`; `nonZeroRequested` the same with the
 *   100m CPU / 200Mi memory defaults; `usedPorts` the union of their host ports.
 * - `podsWithAffinity` ⊆ `pods` (pods with any pod affinity or anti-affinity);
 *   `podsWithRequiredAntiAffinity` ⊆ `podsWithAffinity`.
 * - every change takes a new `generation` from one process-wide counter, so "changed since
 *   the last snapshot" is `generation > snapshot.generation` — the cache's incremental copy.
 * - a NodeInfo may have pods but no node: pod events can arrive before the node's add or after
 *   its delete (they come on different watches).
 */
import type { Node, Pod } from "../../api/core.ts";
import { getPodKey, HostPortInfo, type ImageStateSummary, PodInfo, Resource } from "./types.ts";

// #region generation
let generation = 0;
/** nextGeneration: one counter for every NodeInfo, so generations order changes across nodes. */
export function nextGeneration(): number {
  generation += 1;
  return generation;
}
// #endregion generation

export class NodeInfo {
  private nodeObj: Node | undefined;
  pods: PodInfo[] = [];
  podsWithAffinity: PodInfo[] = [];
  podsWithRequiredAntiAffinity: PodInfo[] = [];
  usedPorts = new HostPortInfo();
  requested = new Resource();
  nonZeroRequested = new Resource();
  allocatable = new Resource();
  /** Image name → summary, for the images this node reports (status.images). */
  imageStates = new Map<string, ImageStateSummary>();
  /** "namespace/claim" → how many pods on the node use that PVC. */
  pvcRefCounts = new Map<string, number>();
  generation: number;

  constructor(...pods: Pod[]) {
    this.generation = nextGeneration();
    for (const p of pods) this.addPod(p);
  }

  node(): Node | undefined {
    return this.nodeObj;
  }

  nodeName(): string {
    return this.nodeObj?.metadata.name ?? "";
  }

  // #region add-remove
  addPodInfo(pi: PodInfo): void {
    this.pods.push(pi);
    if (podWithAffinity(pi.pod)) this.podsWithAffinity.push(pi);
    if (podWithRequiredAntiAffinity(pi.pod)) this.podsWithRequiredAntiAffinity.push(pi);
    this.update(pi, 1);
  }

  addPod(pod: Pod): void {
    this.addPodInfo(new PodInfo(pod));
  }

  /** RemovePod: by the pod's key (UID); an error if the pod is not on this node. */
  removePod(pod: Pod): Error | undefined {
    const key = getPodKey(pod);
    if (podWithAffinity(pod)) this.podsWithAffinity = removeFrom(this.podsWithAffinity, key)[0];
    if (podWithRequiredAntiAffinity(pod)) {
      this.podsWithRequiredAntiAffinity = removeFrom(this.podsWithRequiredAntiAffinity, key)[0];
    }
    const [rest, removed] = removeFrom(this.pods, key);
    if (!removed) {
      return new Error(`no corresponding pod ${pod.metadata.name} in pods of node ${this.nodeName()}`);
    }
    this.pods = rest;
    // Subtract what was added: the stored PodInfo, not the caller's (possibly newer) pod.
    this.update(removed, -1);
    return undefined;
  }

  private update(pi: PodInfo, sign: 1 | -1): void {
    this.requested.addResource(pi.requests, sign);
    this.nonZeroRequested.milliCPU += sign * pi.nonZeroRequests.milliCPU;
    this.nonZeroRequested.memory += sign * pi.nonZeroRequests.memory;
    // Read off the PodInfo, not the pod: the pod object is cold in memory, and a dry run
    // removes and adds back every victim on every candidate node.
    for (const p of pi.hostPorts) {
      if (sign > 0) this.usedPorts.add(p.hostIP, p.protocol, p.hostPort);
      else this.usedPorts.remove(p.hostIP, p.protocol, p.hostPort);
    }
    for (const key of pi.pvcKeys) {
      const n = (this.pvcRefCounts.get(key) ?? 0) + sign;
      if (n > 0) this.pvcRefCounts.set(key, n);
      else this.pvcRefCounts.delete(key);
    }
    this.generation = nextGeneration();
  }
  // #endregion add-remove

  /** SetNode: the node object and its allocatable; pods stay. */
  setNode(node: Node): void {
    this.nodeObj = node;
    this.allocatable = Resource.fromList(node.status?.allocatable);
    this.generation = nextGeneration();
  }

  /** RemoveNode: forget the node object; its pods stay until their own deletes arrive. */
  removeNode(): void {
    this.nodeObj = undefined;
    this.generation = nextGeneration();
  }

  // #region snapshot
  /**
   * Snapshot: a copy a scheduling cycle can read while the cache keeps changing. The lists
   * are new arrays of the same (immutable) PodInfos; the sums and port sets are copied; image
   * summaries keep only size and count.
   */
  snapshot(): NodeInfo {
    const c = Object.create(NodeInfo.prototype) as NodeInfo;
    c.copyFrom(this);
    return c;
  }

  /** Overwrites this NodeInfo with a snapshot of `o`, keeping this object's identity
   * (the snapshot's lists point at it). */
  copyFrom(o: NodeInfo): void {
    this.nodeObj = o.nodeObj;
    this.pods = [...o.pods];
    this.podsWithAffinity = [...o.podsWithAffinity];
    this.podsWithRequiredAntiAffinity = [...o.podsWithRequiredAntiAffinity];
    this.usedPorts = o.usedPorts.clone();
    this.requested = o.requested.clone();
    this.nonZeroRequested = o.nonZeroRequested.clone();
    this.allocatable = o.allocatable.clone();
    this.imageStates = new Map(
      [...o.imageStates].map(([name, s]) => [name, { size: s.size, numNodes: s.nodes?.size ?? s.numNodes }]),
    );
    this.pvcRefCounts = new Map(o.pvcRefCounts);
    this.generation = o.generation;
  }
  // #endregion snapshot
}

function removeFrom(list: PodInfo[], key: string): [PodInfo[], PodInfo | undefined] {
  const i = list.findIndex((pi) => getPodKey(pi.pod) === key);
  if (i < 0) return [list, undefined];
  const removed = list[i];
  // Swap with the last, as upstream: order within a node is not meaningful, removal is O(1).
  list[i] = list[list.length - 1];
  list.pop();
  return [list, removed];
}

export function podWithAffinity(p: Pod): boolean {
  const a = p.spec.affinity;
  return a !== undefined && (a.podAffinity !== undefined || a.podAntiAffinity !== undefined);
}

export function podWithRequiredAntiAffinity(p: Pod): boolean {
  return (p.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0;
}
