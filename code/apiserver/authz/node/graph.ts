/**
 * The node authorizer's graph — which objects each node needs, as a directed graph whose edges
 * all point toward nodes: secret → pod → node, pvc → pod, pv → pvc, serviceaccount → pod.
 * Upstream: kubernetes plugin/pkg/auth/authorizer/node/graph.go.
 *
 * Solves:
 * - "may node-a read secret default/db?" becomes "is there a path from secret:default/db to
 *   node:node-a?" — a question about relationships, which no list of rules can answer;
 * - a secret used by pods on two nodes is one vertex with two edges; deleting one pod takes one
 *   edge away and leaves the other node's access intact;
 * - vertices nobody points to any more disappear with the last edge, so the graph stays the
 *   size of what is scheduled, not of what was ever scheduled.
 *
 * Invariants:
 * - a vertex is one (type, namespace, name); cluster-scoped objects (node, pv) have namespace "";
 * - every edge out of a pod, and every edge into a pod, carries the node that pod is bound to
 *   (`destination`), so a search from a secret can skip the edges toward other nodes at once;
 * - the only edges without a destination are pv → pvc and secret → pv: a PV does not know which
 *   pod, if any, uses its claim;
 * - `addPod` replaces everything the pod had: its vertex is deleted first, then built again.
 *
 * What upstream does differently: it keeps, for vertices with 200 or more edges, an index of
 * the nodes reachable through them (a shared configmap used by thousands of pods answers
 * without a search); metrics on every change; a read-write lock (JavaScript has one thread).
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/node/graph.go (Graph, namedVertex, destinationEdge, AddPod, DeletePod, AddPV, DeletePV, AddVolumeAttachment, deleteVertexLocked)
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/node/node_authorizer.go (hasPathFrom)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import {
  type PodRefs,
  podConfigMapNames,
  podPVCNames,
  podResourceClaimNames,
  podSecretNames,
  pvKubeletSecretRefs,
} from "./pod-references.ts";

// #region vertices
/** Upstream's vertexTypes, spelled as upstream's log lines spell them. */
export type VertexType =
  | "configmap"
  | "node"
  | "pod"
  | "pvc"
  | "pv"
  | "resourceclaim"
  | "secret"
  | "volumeattachment"
  | "serviceAccount";

interface Vertex {
  readonly id: number;
  readonly type: VertexType;
  readonly namespace: string;
  readonly name: string;
}

interface Edge {
  readonly from: Vertex;
  readonly to: Vertex;
  /** The node at the end of this edge's path, when it is known (upstream's destinationEdge). */
  readonly destination?: Vertex;
}
// #endregion vertices

/** The annotation a kubelet puts on the pods it mirrors from static manifests. */
export const mirrorPodAnnotationKey = "kubernetes.io/config.mirror";

export class Graph {
  private nextID = 0;
  /** `type/namespace/name` → vertex. */
  private readonly vertices = new Map<string, Vertex>();
  /** vertex id → edges leaving it, by the id of their target. */
  private readonly out = new Map<number, Map<number, Edge>>();
  /** vertex id → edges reaching it, by the id of their source. */
  private readonly in = new Map<number, Map<number, Edge>>();

  // #region plumbing
  private key(type: VertexType, namespace: string, name: string): string {
    return `${type}/${namespace}/${name}`;
  }

  getVertex(type: VertexType, namespace: string, name: string): Vertex | undefined {
    return this.vertices.get(this.key(type, namespace, name));
  }

  private getOrCreateVertex(type: VertexType, namespace: string, name: string): Vertex {
    const existing = this.getVertex(type, namespace, name);
    if (existing) return existing;
    const v: Vertex = { id: this.nextID++, type, namespace, name };
    this.vertices.set(this.key(type, namespace, name), v);
    this.out.set(v.id, new Map());
    this.in.set(v.id, new Map());
    return v;
  }

  private addEdge(from: Vertex, to: Vertex, destination?: Vertex): void {
    const e: Edge = { from, to, destination };
    this.out.get(from.id)?.set(to.id, e);
    this.in.get(to.id)?.set(from.id, e);
  }

  /** Edges in plus edges out, as gonum's Degree counts. */
  private degree(v: Vertex): number {
    return (this.out.get(v.id)?.size ?? 0) + (this.in.get(v.id)?.size ?? 0);
  }

  private removeVertex(v: Vertex): void {
    for (const e of this.out.get(v.id)?.values() ?? []) this.in.get(e.to.id)?.delete(v.id);
    for (const e of this.in.get(v.id)?.values() ?? []) this.out.get(e.from.id)?.delete(v.id);
    this.out.delete(v.id);
    this.in.delete(v.id);
    this.vertices.delete(this.key(v.type, v.namespace, v.name));
  }
  // #endregion plumbing

  // #region delete-vertex
  /**
   * Removes a vertex and every neighbour whose only edge was to or from it: the pod's node if no
   * other pod runs there, the pod's secret if no other pod uses it.
   */
  private deleteVertex(type: VertexType, namespace: string, name: string): void {
    const v = this.getVertex(type, namespace, name);
    if (!v) return;
    const orphans: Vertex[] = [];
    for (const e of this.out.get(v.id)?.values() ?? []) if (this.degree(e.to) === 1) orphans.push(e.to);
    for (const e of this.in.get(v.id)?.values() ?? []) if (this.degree(e.from) === 1) orphans.push(e.from);
    this.removeVertex(v);
    for (const o of orphans) this.removeVertex(o);
  }
  // #endregion delete-vertex

  // #region add-pod
  /**
   * A pod bound to a node: pod → node, and an edge into the pod from each object it references.
   * A pod's references cannot change once it is bound, so the populator calls this only when a
   * pod is first seen bound, or comes back with a new uid or node.
   */
  addPod(pod: PodRefs): void {
    const { namespace = "", name = "" } = pod.metadata;
    const nodeName = pod.spec?.nodeName ?? "";
    this.deleteVertex("pod", namespace, name);
    const podV = this.getOrCreateVertex("pod", namespace, name);
    const nodeV = this.getOrCreateVertex("node", "", nodeName);
    this.addEdge(podV, nodeV, nodeV);

    // A node may create mirror pods; they must never grant it anything (NodeRestriction refuses
    // such pods with references, and this is the second line of defence).
    if (pod.metadata.annotations?.[mirrorPodAnnotationKey] !== undefined) return;

    const refs: [VertexType, string[]][] = [
      ["serviceAccount", pod.spec?.serviceAccountName ? [pod.spec.serviceAccountName] : []],
      ["secret", podSecretNames(pod)],
      ["configmap", podConfigMapNames(pod)],
      ["pvc", podPVCNames(pod)],
      ["resourceclaim", podResourceClaimNames(pod)],
    ];
    for (const [type, names] of refs) {
      for (const n of names) this.addEdge(this.getOrCreateVertex(type, namespace, n), podV, nodeV);
    }
  }

  deletePod(namespace: string, name: string): void {
    this.deleteVertex("pod", namespace, name);
  }
  // #endregion add-pod

  // #region add-pv
  /** A PV bound to a claim: pv → pvc, and secret → pv for each secret the kubelet reads for it. */
  addPV(pv: KubeObject): void {
    const name = pv.metadata.name ?? "";
    this.deleteVertex("pv", "", name);
    const claimRef = (pv.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
    if (!claimRef?.name) return;
    const pvV = this.getOrCreateVertex("pv", "", name);
    // Which pod, and so which node, uses the claim is not known here: no destination.
    this.addEdge(pvV, this.getOrCreateVertex("pvc", claimRef.namespace ?? "", claimRef.name));
    for (const s of pvKubeletSecretRefs(pv)) {
      this.addEdge(this.getOrCreateVertex("secret", s.namespace, s.name), pvV);
    }
  }

  deletePV(name: string): void {
    this.deleteVertex("pv", "", name);
  }

  /** A CSI VolumeAttachment: volumeattachment → node. */
  addVolumeAttachment(name: string, nodeName: string): void {
    this.deleteVertex("volumeattachment", "", name);
    if (!nodeName) return;
    const nodeV = this.getOrCreateVertex("node", "", nodeName);
    this.addEdge(this.getOrCreateVertex("volumeattachment", "", name), nodeV, nodeV);
  }

  deleteVolumeAttachment(name: string): void {
    this.deleteVertex("volumeattachment", "", name);
  }
  // #endregion add-pv

  // #region has-path
  /**
   * Is there a path from the object to the node? A depth-first walk that never follows an edge
   * whose destination is another node. The answer's `why` is for the log (upstream's error
   * text); the client is told only that no relationship was found.
   */
  hasPathFrom(
    nodeName: string,
    type: VertexType,
    namespace: string,
    name: string,
  ): { found: true } | { found: false; why: string } {
    const nodeV = this.getVertex("node", "", nodeName);
    if (!nodeV)
      return { found: false, why: `unknown node '${nodeName}' cannot get ${type} ${namespace}/${name}` };
    const start = this.getVertex(type, namespace, name);
    if (!start)
      return { found: false, why: `node '${nodeName}' cannot get unknown ${type} ${namespace}/${name}` };

    const seen = new Set<number>([start.id]);
    const stack: Vertex[] = [start];
    while (stack.length > 0) {
      const v = stack.pop() as Vertex;
      if (v.id === nodeV.id) return { found: true };
      for (const e of this.out.get(v.id)?.values() ?? []) {
        if (e.destination && e.destination.id !== nodeV.id) continue; // toward another node
        if (seen.has(e.to.id)) continue;
        seen.add(e.to.id);
        stack.push(e.to);
      }
    }
    return {
      found: false,
      why: `node '${nodeName}' cannot get ${type} ${namespace}/${name}, no relationship to this object was found in the node authorizer graph`,
    };
  }
  // #endregion has-path

  /** The vertices, as `type:namespace/name` (tests and debugging). */
  describe(): string[] {
    return [...this.vertices.values()]
      .map((v) => (v.namespace ? `${v.type}:${v.namespace}/${v.name}` : `${v.type}:${v.name}`))
      .sort();
  }
}
