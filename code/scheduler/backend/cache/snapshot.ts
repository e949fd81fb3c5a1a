/**
 * Snapshot — the cluster as one scheduling cycle sees it: a NodeInfo per node, in node-tree
 * order, frozen for the cycle while the cache keeps changing.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/cache/snapshot.go (Snapshot, NewEmptySnapshot, NewSnapshot, NodeInfos, List, HavePodsWithAffinityList, HavePodsWithRequiredAntiAffinityList, Get, IsPVCUsedByPods)
 * @chapter 05-scheduler
 *
 * Solves: Filter and Score run node by node, in parallel upstream; if the cache changed under
 * them (a pod bound, a node removed), one node would be judged by one state and the next by
 * another. A snapshot gives the whole cycle one state; the cache refreshes it between cycles.
 *
 * Invariants:
 * - `nodeInfoList` holds exactly the NodeInfos of `nodeInfoMap` whose node exists, in node-tree
 *   (zone round-robin) order; the two "have pods with …" lists are its sub-lists.
 * - `generation` is the highest NodeInfo generation copied in: anything newer is not here yet.
 */
import type { Node, Pod } from "../../../api/core.ts";
import { NodeInfo } from "../../framework/node-info.ts";
import { NodeTree } from "./node-tree.ts";

export class Snapshot {
  nodeInfoMap = new Map<string, NodeInfo>();
  nodeInfoList: NodeInfo[] = [];
  havePodsWithAffinityNodeInfoList: NodeInfo[] = [];
  havePodsWithRequiredAntiAffinityNodeInfoList: NodeInfo[] = [];
  usedPVCSet = new Set<string>();
  generation = 0;

  // #region lister
  /** List: every node, in the order the scheduler walks them. */
  list(): NodeInfo[] {
    return this.nodeInfoList;
  }

  havePodsWithAffinityList(): NodeInfo[] {
    return this.havePodsWithAffinityNodeInfoList;
  }

  havePodsWithRequiredAntiAffinityList(): NodeInfo[] {
    return this.havePodsWithRequiredAntiAffinityNodeInfoList;
  }

  /** Get: the node's NodeInfo, or upstream's error for a node that is not (or no longer) there. */
  get(nodeName: string): NodeInfo | Error {
    const ni = this.nodeInfoMap.get(nodeName);
    if (ni?.node()) return ni;
    return new Error(`nodeinfo not found for node name ${JSON.stringify(nodeName)}`);
  }

  isPVCUsedByPods(key: string): boolean {
    return this.usedPVCSet.has(key);
  }

  numNodes(): number {
    return this.nodeInfoList.length;
  }
  // #endregion lister
}

/** NewSnapshot: a snapshot built from scratch (tests, simulations, and the cache's cross-check). */
export function newSnapshot(pods: Pod[], nodes: Node[]): Snapshot {
  const s = new Snapshot();
  for (const node of nodes) {
    const ni = new NodeInfo();
    ni.setNode(node);
    s.nodeInfoMap.set(node.metadata.name ?? "", ni);
  }
  for (const pod of pods) {
    const name = pod.spec.nodeName ?? "";
    let ni = s.nodeInfoMap.get(name);
    if (!ni) {
      ni = new NodeInfo();
      s.nodeInfoMap.set(name, ni);
    }
    ni.addPod(pod);
  }
  // ImageStates as the cache keeps them: per image, its size and how many nodes have it.
  const imageNodes = new Map<string, { size: number; nodes: Set<string> }>();
  for (const node of nodes) {
    for (const image of node.status?.images ?? []) {
      for (const name of image.names ?? []) {
        const st = imageNodes.get(name) ?? { size: image.sizeBytes ?? 0, nodes: new Set<string>() };
        st.nodes.add(node.metadata.name ?? "");
        imageNodes.set(name, st);
      }
    }
  }
  for (const node of nodes) {
    const ni = s.nodeInfoMap.get(node.metadata.name ?? "")!;
    for (const image of node.status?.images ?? []) {
      for (const name of image.names ?? []) {
        const st = imageNodes.get(name)!;
        ni.imageStates.set(name, { size: st.size, numNodes: st.nodes.size });
      }
    }
  }
  for (const name of new NodeTree(nodes).list()) {
    const ni = s.nodeInfoMap.get(name)!;
    s.nodeInfoList.push(ni);
    if (ni.podsWithAffinity.length > 0) s.havePodsWithAffinityNodeInfoList.push(ni);
    if (ni.podsWithRequiredAntiAffinity.length > 0) s.havePodsWithRequiredAntiAffinityNodeInfoList.push(ni);
    for (const key of ni.pvcRefCounts.keys()) s.usedPVCSet.add(key);
  }
  return s;
}
