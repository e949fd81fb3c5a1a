/**
 * Cache — the scheduler's own view of nodes and pods, including the pods it has assumed onto a
 * node but whose binding the API server has not yet confirmed; the source of each cycle's
 * snapshot.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/cache/cache.go (cacheImpl, New, AssumePod, FinishBinding, ForgetPod, AddPod, UpdatePod, RemovePod, AddNode, UpdateNode, RemoveNode, UpdateSnapshot, cleanupAssumedPods, moveNodeInfoToHead, nodeInfoListItem)
 * @upstream kubernetes/kubernetes pkg/scheduler/scheduler.go (durationToExpireAssumedPod)
 * @chapter 05-scheduler
 *
 * Solves:
 * - assume-then-bind: binding is an API call (milliseconds); the informer's confirmation comes
 *   later still. If the next cycle did not count the pod just placed, it would place the next
 *   pod into the same room. So the scheduler *assumes* the pod onto the node in its cache at
 *   once, binds asynchronously, and the informer's add later confirms it (or a failed bind
 *   forgets it).
 * - incremental snapshots: copying 5,000 NodeInfos every cycle would dominate the cycle. The
 *   NodeInfos sit in a doubly-linked list, most recently changed first; `updateSnapshot` walks
 *   from the head and stops at the first node not changed since the snapshot's generation.
 *
 * Invariants:
 * - every NodeInfo with a node or with pods is in `nodes` and in the list exactly once; list
 *   order is non-increasing `generation` (a change moves the node to the head).
 * - `assumedPods` ⊆ keys of `podStates`; an assumed pod is counted on its node like any other.
 * - an assumed pod expires only if its binding finished and `ttl` > 0 and the deadline passed;
 *   upstream 1.32 passes ttl 0 (durationToExpireAssumedPod), so assumed pods never expire.
 * - cache errors are returned as values, never thrown: the caller (an informer handler) logs.
 */
import type { Node, Pod } from "../../../api/core.ts";
import { type Clock, realClock, type Timer } from "../../../client/util/clock.ts";
import { NodeInfo } from "../../framework/node-info.ts";
import { getPodKey, type ImageStateSummary } from "../../framework/types.ts";
import { NodeTree } from "./node-tree.ts";
import type { Snapshot } from "./snapshot.ts";

/** durationToExpireAssumedPod in 1.32: 0, never expire (kubernetes#106361). */
export const durationToExpireAssumedPod = 0;
/** How often expired assumed pods are looked for (cleanAssumedPeriod). */
export const cleanAssumedPeriod = 1_000;

interface PodState {
  pod: Pod;
  /** When an assumed pod expires; undefined: never. */
  deadline?: number;
  /** An assumed pod must not expire while its binding is still running. */
  bindingFinished: boolean;
}

// #region node-list
/** nodeInfoListItem: a NodeInfo in the recency list. */
interface NodeInfoListItem {
  info: NodeInfo;
  next?: NodeInfoListItem;
  prev?: NodeInfoListItem;
}
// #endregion node-list

interface ImageState {
  size: number;
  nodes: Set<string>;
}

const podName = (p: Pod) => `${p.metadata.namespace}/${p.metadata.name}`;

export class Cache {
  private readonly nodes = new Map<string, NodeInfoListItem>();
  /** The most recently changed NodeInfo. */
  private headNode?: NodeInfoListItem;
  private readonly nodeTree = new NodeTree();
  private readonly podStates = new Map<string, PodState>();
  private readonly assumedPods = new Set<string>();
  private readonly imageStates = new Map<string, ImageState>();
  private timer?: Timer;

  constructor(
    /** How long after its binding finished an unconfirmed assumed pod expires; 0: never. */
    readonly ttl = durationToExpireAssumedPod,
    private readonly clock: Clock = realClock,
  ) {}

  /** run: looks for expired assumed pods every second, until `stop`. */
  run(): void {
    const tick = () => {
      this.cleanupAssumedPods(this.clock.now());
      this.timer = this.clock.afterFunc(cleanAssumedPeriod, tick);
    };
    this.timer = this.clock.afterFunc(cleanAssumedPeriod, tick);
  }

  stop(): void {
    this.timer?.stop();
  }

  // #region recency-list
  /** moveNodeInfoToHead: the node just changed; it goes first so the next snapshot sees it first. */
  private moveNodeInfoToHead(name: string): void {
    const ni = this.nodes.get(name);
    if (!ni || ni === this.headNode) return;
    if (ni.prev) ni.prev.next = ni.next;
    if (ni.next) ni.next.prev = ni.prev;
    if (this.headNode) this.headNode.prev = ni;
    ni.next = this.headNode;
    ni.prev = undefined;
    this.headNode = ni;
  }

  private removeNodeInfoFromList(name: string): void {
    const ni = this.nodes.get(name);
    if (!ni) return;
    if (ni.prev) ni.prev.next = ni.next;
    if (ni.next) ni.next.prev = ni.prev;
    if (ni === this.headNode) this.headNode = ni.next;
    this.nodes.delete(name);
  }

  private nodeItem(name: string): NodeInfoListItem {
    let item = this.nodes.get(name);
    if (!item) {
      item = { info: new NodeInfo() };
      this.nodes.set(name, item);
    }
    return item;
  }
  // #endregion recency-list

  // #region update-snapshot
  /**
   * UpdateSnapshot: copies into `snapshot` only the NodeInfos changed since its generation,
   * keeping each NodeInfo object's identity; rebuilds the lists only when membership changed.
   * Returns how many NodeInfos were copied, or an error if the snapshot came out inconsistent
   * (the lists are then rebuilt for the next cycle).
   */
  updateSnapshot(snapshot: Snapshot): { copied: number; error?: Error } {
    const since = snapshot.generation;
    let updateAllLists = false;
    let updateAffinityLists = false;
    let updatePVCs = false;
    let copied = 0;
    for (let item = this.headNode; item; item = item.next) {
      // The list is ordered by generation: the first old node means the rest are old too.
      if (item.info.generation <= since) break;
      const node = item.info.node();
      if (!node) continue;
      const name = node.metadata.name ?? "";
      let existing = snapshot.nodeInfoMap.get(name);
      if (!existing) {
        updateAllLists = true;
        existing = new NodeInfo();
        snapshot.nodeInfoMap.set(name, existing);
      }
      const src = item.info;
      if (existing.podsWithAffinity.length > 0 !== src.podsWithAffinity.length > 0)
        updateAffinityLists = true;
      if (existing.podsWithRequiredAntiAffinity.length > 0 !== src.podsWithRequiredAntiAffinity.length > 0) {
        updateAffinityLists = true;
      }
      if (!sameKeys(existing.pvcRefCounts, src.pvcRefCounts)) updatePVCs = true;
      // Overwrite in place: nodeInfoList holds this object, and may not be rebuilt.
      existing.copyFrom(src);
      copied++;
    }
    if (this.headNode) snapshot.generation = this.headNode.info.generation;
    // A node deleted from the tree may linger in `nodes` while it still has pods; drop it here.
    if (snapshot.nodeInfoMap.size > this.nodeTree.numNodes) {
      this.removeDeletedNodesFromSnapshot(snapshot);
      updateAllLists = true;
    }
    if (updateAllLists || updateAffinityLists || updatePVCs)
      this.updateNodeInfoSnapshotList(snapshot, updateAllLists);
    if (snapshot.nodeInfoList.length !== this.nodeTree.numNodes) {
      const msg =
        `snapshot state is not consistent, length of NodeInfoList=${snapshot.nodeInfoList.length} not equal to ` +
        `length of nodes in tree=${this.nodeTree.numNodes} , length of NodeInfoMap=${snapshot.nodeInfoMap.size}, ` +
        `length of nodes in cache=${this.nodes.size}, trying to recover`;
      this.updateNodeInfoSnapshotList(snapshot, true);
      return { copied, error: new Error(msg) };
    }
    return { copied };
  }

  private updateNodeInfoSnapshotList(snapshot: Snapshot, updateAll: boolean): void {
    snapshot.havePodsWithAffinityNodeInfoList = [];
    snapshot.havePodsWithRequiredAntiAffinityNodeInfoList = [];
    snapshot.usedPVCSet = new Set();
    if (updateAll) {
      snapshot.nodeInfoList = [];
      for (const name of this.nodeTree.list()) {
        const ni = snapshot.nodeInfoMap.get(name);
        if (ni) snapshot.nodeInfoList.push(ni);
      }
    }
    for (const ni of snapshot.nodeInfoList) {
      if (ni.podsWithAffinity.length > 0) snapshot.havePodsWithAffinityNodeInfoList.push(ni);
      if (ni.podsWithRequiredAntiAffinity.length > 0)
        snapshot.havePodsWithRequiredAntiAffinityNodeInfoList.push(ni);
      for (const key of ni.pvcRefCounts.keys()) snapshot.usedPVCSet.add(key);
    }
  }

  private removeDeletedNodesFromSnapshot(snapshot: Snapshot): void {
    for (const name of [...snapshot.nodeInfoMap.keys()]) {
      if (!this.nodes.get(name)?.info.node()) snapshot.nodeInfoMap.delete(name);
    }
  }
  // #endregion update-snapshot

  // #region assume
  /** AssumePod: count the pod on its node now, before the binding is confirmed. */
  assumePod(pod: Pod): Error | undefined {
    const key = getPodKey(pod);
    if (this.podStates.has(key))
      return new Error(`pod ${key}(${podName(pod)}) is in the cache, so can't be assumed`);
    this.addPodInternal(pod, true);
    return undefined;
  }

  /** FinishBinding: the bind call returned; from now the assumed pod may expire (if ttl > 0). */
  finishBinding(pod: Pod, now = this.clock.now()): Error | undefined {
    const key = getPodKey(pod);
    const state = this.podStates.get(key);
    if (state && this.assumedPods.has(key)) {
      state.deadline = this.ttl === 0 ? undefined : now + this.ttl;
      state.bindingFinished = true;
    }
    return undefined;
  }

  /** ForgetPod: the binding failed; take the assumed pod off its node. */
  forgetPod(pod: Pod): Error | undefined {
    const key = getPodKey(pod);
    const state = this.podStates.get(key);
    if (state && state.pod.spec.nodeName !== pod.spec.nodeName) {
      return new Error(
        `pod ${key}(${podName(pod)}) was assumed on ${pod.spec.nodeName} but assigned to ${state.pod.spec.nodeName}`,
      );
    }
    if (state && this.assumedPods.has(key)) return this.removePodInternal(pod);
    return new Error(`pod ${key}(${podName(pod)}) wasn't assumed so cannot be forgotten`);
  }
  // #endregion assume

  // #region pod-events
  /** AddPod: the informer saw a bound pod — confirming an assumed one, or a pod bound elsewhere. */
  addPod(pod: Pod): Error | undefined {
    const key = getPodKey(pod);
    const state = this.podStates.get(key);
    if (state && this.assumedPods.has(key)) {
      // Already counted when assumed; swap in the API server's version (it may differ, e.g. a
      // binding to another node by someone else).
      const err = this.updatePodInternal(state.pod, pod);
      this.assumedPods.delete(key);
      const confirmed = this.podStates.get(key);
      if (confirmed) confirmed.deadline = undefined;
      return err;
    }
    // Not here at all: an expired assumed pod whose add came late, or a pod bound by others.
    if (!state) {
      this.addPodInternal(pod, false);
      return undefined;
    }
    return new Error(`pod ${key}(${podName(pod)}) was already in added state`);
  }

  updatePod(oldPod: Pod, newPod: Pod): Error | undefined {
    const key = getPodKey(oldPod);
    const state = this.podStates.get(key);
    if (!state)
      return new Error(
        `pod ${key}(${podName(oldPod)}) is not added to scheduler cache, so cannot be updated`,
      );
    // An assumed pod's updates come only after its add; before that they would be about a
    // different pod object than the one counted.
    if (this.assumedPods.has(key))
      return new Error(`assumed pod ${key}(${podName(oldPod)}) should not be updated`);
    if (state.pod.spec.nodeName !== newPod.spec.nodeName) {
      return new Error(`pod ${key}(${podName(oldPod)}) updated on a different node than previously added to`);
    }
    return this.updatePodInternal(state.pod, newPod);
  }

  removePod(pod: Pod): Error | undefined {
    const key = getPodKey(pod);
    const state = this.podStates.get(key);
    if (!state)
      return new Error(
        `pod ${key}(${podName(pod)}) is not found in scheduler cache, so cannot be removed from it`,
      );
    // schedcmd: a tombstone's pod may be its last state seen unbound (a missed Delete), with no
    // nodeName: upstream removes the cached pod anyway; only a real other node is an error.
    if (state.pod.spec.nodeName !== pod.spec.nodeName && pod.spec.nodeName) {
      return new Error(`pod ${key}(${podName(pod)}) was added to a different node than it was assumed`);
    }
    // Remove what was counted (the cached version), not the caller's copy.
    return this.removePodInternal(state.pod);
  }

  isAssumedPod(pod: Pod): boolean {
    return this.assumedPods.has(getPodKey(pod));
  }

  getPod(pod: Pod): Pod | undefined {
    return this.podStates.get(getPodKey(pod))?.pod;
  }

  private addPodInternal(pod: Pod, assumed: boolean): void {
    const name = pod.spec.nodeName ?? "";
    this.nodeItem(name).info.addPod(pod);
    this.moveNodeInfoToHead(name);
    this.podStates.set(getPodKey(pod), { pod, bindingFinished: false });
    if (assumed) this.assumedPods.add(getPodKey(pod));
  }

  private updatePodInternal(oldPod: Pod, newPod: Pod): Error | undefined {
    const err = this.removePodInternal(oldPod);
    if (err) return err;
    this.addPodInternal(newPod, false);
    return undefined;
  }

  private removePodInternal(pod: Pod): Error | undefined {
    const name = pod.spec.nodeName ?? "";
    const item = this.nodes.get(name);
    if (item) {
      const err = item.info.removePod(pod);
      if (err) return err;
      // A NodeInfo with neither node nor pods has nothing left to say.
      if (item.info.pods.length === 0 && !item.info.node()) this.removeNodeInfoFromList(name);
      else this.moveNodeInfoToHead(name);
    }
    this.podStates.delete(getPodKey(pod));
    this.assumedPods.delete(getPodKey(pod));
    return undefined;
  }
  // #endregion pod-events

  // #region expire
  /** cleanupAssumedPods: drops assumed pods whose binding finished and whose deadline passed. */
  cleanupAssumedPods(now: number): void {
    for (const key of [...this.assumedPods]) {
      const state = this.podStates.get(key);
      if (!state?.bindingFinished) continue;
      if (state.deadline !== undefined && now > state.deadline) this.removePodInternal(state.pod);
    }
  }
  // #endregion expire

  // #region node-events
  addNode(node: Node): NodeInfo {
    const name = node.metadata.name ?? "";
    const existed = this.nodes.get(name);
    const item = this.nodeItem(name);
    if (existed) this.removeNodeImageStates(item.info.node());
    this.moveNodeInfoToHead(name);
    this.nodeTree.addNode(node);
    this.addNodeImageStates(node, item.info);
    item.info.setNode(node);
    return item.info.snapshot();
  }

  updateNode(oldNode: Node | undefined, newNode: Node): NodeInfo {
    const name = newNode.metadata.name ?? "";
    const existed = this.nodes.get(name);
    const item = this.nodeItem(name);
    if (!existed?.info.node()) this.nodeTree.addNode(newNode);
    else {
      this.removeNodeImageStates(item.info.node());
      this.nodeTree.updateNode(item.info.node() ?? oldNode, newNode);
    }
    this.moveNodeInfoToHead(name);
    this.addNodeImageStates(newNode, item.info);
    item.info.setNode(newNode);
    return item.info.snapshot();
  }

  /**
   * RemoveNode: the node object goes; its NodeInfo stays while pods remain on it, because pod
   * deletes come on another watch and may arrive after the node's.
   */
  removeNode(node: Node): Error | undefined {
    const name = node.metadata.name ?? "";
    const item = this.nodes.get(name);
    if (!item) return new Error(`node ${name} is not found`);
    item.info.removeNode();
    if (item.info.pods.length === 0) this.removeNodeInfoFromList(name);
    else this.moveNodeInfoToHead(name);
    const err = this.nodeTree.removeNode(node);
    this.removeNodeImageStates(node);
    return err;
  }
  // #endregion node-events

  // #region images
  private addNodeImageStates(node: Node, info: NodeInfo): void {
    const summaries = new Map<string, ImageStateSummary>();
    for (const image of node.status?.images ?? []) {
      for (const name of image.names ?? []) {
        let state = this.imageStates.get(name);
        if (!state) {
          state = { size: image.sizeBytes ?? 0, nodes: new Set() };
          this.imageStates.set(name, state);
        }
        state.nodes.add(node.metadata.name ?? "");
        // Shares the live node set: a snapshot reads the count at copy time.
        if (!summaries.has(name))
          summaries.set(name, { size: state.size, numNodes: state.nodes.size, nodes: state.nodes });
      }
    }
    info.imageStates = summaries;
  }

  private removeNodeImageStates(node: Node | undefined): void {
    if (!node) return;
    for (const image of node.status?.images ?? []) {
      for (const name of image.names ?? []) {
        const state = this.imageStates.get(name);
        if (!state) continue;
        state.nodes.delete(node.metadata.name ?? "");
        if (state.nodes.size === 0) this.imageStates.delete(name);
      }
    }
  }
  // #endregion images

  nodeCount(): number {
    return this.nodes.size;
  }

  podCount(): number {
    let n = 0;
    for (const item of this.nodes.values()) n += item.info.pods.length;
    return n;
  }

  /** The node names in recency order (head first) — for tests of the list's invariant. */
  recencyOrder(): string[] {
    const out: string[] = [];
    for (let item = this.headNode; item; item = item.next)
      out.push(item.info.node()?.metadata.name ?? "(no node)");
    return out;
  }
}

function sameKeys(a: Map<string, number>, b: Map<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const k of a.keys()) if (!b.has(k)) return false;
  return true;
}
