/**
 * The graph populator — keeps the node authorizer's graph current from the registry: every pod
 * that is bound, rebound, recreated or deleted changes the graph a moment later. Upstream:
 * kubernetes plugin/pkg/auth/authorizer/node/graph_populator.go.
 *
 * Solves:
 * - the authorizer answers from memory, never from storage: a kubelet asks for its secrets
 *   thousands of times a minute, and a storage read per request would be the cluster's cost;
 * - a watch event carries only the new object, but "did the pod change node?" needs the old
 *   one, so each resource keeps the last object it saw per key (an informer's store);
 * - a watch that ends (a compaction, a restart) is followed by a fresh list, and whatever that
 *   list no longer has is deleted from the graph, so no edge outlives its pod.
 *
 * Invariants:
 * - a pod enters the graph once it has a node; it is rebuilt only when its node or uid changes
 *   (the references of a bound pod are immutable), or its resource claim statuses do;
 * - a pod that leaves its node (deleted, or — which upstream's validation forbids but this
 *   miniature's allows — its spec.nodeName cleared) leaves the graph;
 * - authorization is eventually consistent: until the event arrives, a new pod's node is
 *   refused its secrets, as upstream's is.
 *
 * What upstream does differently: shared informers over a loopback client (list + watch through
 * the API server itself, with its own credentials), rather than the registry stores' watches
 * in-process; tombstones (DeletedFinalStateUnknown) for deletes missed during a relist; pods,
 * PVs, VolumeAttachments and (with DRA) ResourceSlices — here PVs and VolumeAttachments are
 * watched only if the server has those resources.
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/node/graph_populator.go (AddGraphEventHandlers, graphPopulator.updatePod, deletePod, updatePV, updateVolumeAttachment)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/reflector.go (ListAndWatch: list, replace, watch from the list's resourceVersion)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { Store } from "../../registry/store.ts";
import { type InformerHandlers, StoreInformer } from "../../registry/store-informer.ts";

export { StoreInformer } from "../../registry/store-informer.ts";

import type { Graph } from "./graph.ts";
import type { PodRefs } from "./pod-references.ts";

type Handlers = InformerHandlers;

// #region pod-handlers
function nodeOf(pod: KubeObject): string {
  return (pod as PodRefs).spec?.nodeName ?? "";
}

function claimStatuses(pod: KubeObject): string {
  return JSON.stringify((pod as PodRefs).status?.resourceClaimStatuses ?? []);
}

/** graphPopulator's pod callbacks. */
export function podHandlers(graph: Graph): Handlers {
  const update = (old: KubeObject | undefined, pod: KubeObject) => {
    const { namespace = "", name = "" } = pod.metadata;
    if (!nodeOf(pod)) {
      // Unbound. Upstream returns here (a bound pod cannot be unbound there); here it can be.
      if (old && nodeOf(old)) graph.deletePod(namespace, name);
      return;
    }
    if (
      old &&
      nodeOf(old) === nodeOf(pod) &&
      old.metadata.uid === pod.metadata.uid &&
      claimStatuses(old) === claimStatuses(pod)
    ) {
      return; // same node, same pod: every reference in a bound pod's spec is immutable
    }
    graph.addPod(pod as PodRefs);
  };
  return {
    add: (pod) => update(undefined, pod),
    update,
    delete: (pod) => {
      if (nodeOf(pod)) graph.deletePod(pod.metadata.namespace ?? "", pod.metadata.name ?? "");
    },
  };
}
// #endregion pod-handlers

function pvHandlers(graph: Graph): Handlers {
  return {
    add: (pv) => graph.addPV(pv),
    update: (_old, pv) => graph.addPV(pv),
    delete: (pv) => graph.deletePV(pv.metadata.name ?? ""),
  };
}

function attachmentHandlers(graph: Graph): Handlers {
  const nodeName = (va: KubeObject) => (va.spec as { nodeName?: string } | undefined)?.nodeName ?? "";
  return {
    add: (va) => graph.addVolumeAttachment(va.metadata.name ?? "", nodeName(va)),
    update: (old, va) => {
      if (nodeName(old) !== nodeName(va)) graph.addVolumeAttachment(va.metadata.name ?? "", nodeName(va));
    },
    delete: (va) => graph.deleteVolumeAttachment(va.metadata.name ?? ""),
  };
}

// #region populator
/** AddGraphEventHandlers over the registry stores (as server.ts keys them: `group/resource`). */
export class GraphPopulator {
  private readonly informers: StoreInformer[] = [];

  constructor(graph: Graph, stores: Map<string, Store>) {
    const sources: [string, Handlers][] = [
      ["/pods", podHandlers(graph)],
      ["/persistentvolumes", pvHandlers(graph)],
      ["storage.k8s.io/volumeattachments", attachmentHandlers(graph)],
    ];
    for (const [key, handlers] of sources) {
      const store = stores.get(key);
      if (store) this.informers.push(new StoreInformer(store, handlers));
    }
    for (const i of this.informers) void i.run();
  }

  /** Resolves once every informer has listed once (upstream's WaitForCacheSync). */
  async hasSynced(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.synced));
  }

  stop(): void {
    for (const i of this.informers) i.stop();
  }
}
// #endregion populator
