/**
 * The API server pod source — every pod bound to this node, as a list-and-watch with
 * `fieldSelector=spec.nodeName=<node>`.
 * Mirrors kubernetes/kubernetes pkg/kubelet/config/apiserver.go.
 *
 * Solves: the API server never pushes a pod to a kubelet and never calls it; the kubelet asks,
 * like every other client, with a watch the API server filters by node. The chapter-4 Reflector
 * does the listing, the watching and the resuming; its store here is an UndeltaStore, which
 * answers every change with the whole current set (a SET), since that is what PodConfig merges.
 *
 * Invariants: every list and watch request carries `fieldSelector=spec.nodeName=<nodeName>`;
 * after each add, update, delete or relist the source sends all the pods it has.
 *
 * What upstream does differently: upstream waits for the node informer to sync before it starts
 * (so admission knows the node); the source here starts at once.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/config/apiserver.go (NewSourceApiserver, newSourceApiserverFromLW)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/undelta_store.go (UndeltaStore)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";
import { Resources } from "../../client/informers/factory.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { newListWatchFromClient } from "../../client/tools/cache/listwatch.ts";
import { Reflector, type ReflectorStore } from "../../client/tools/cache/reflector.ts";
import type { Clock } from "../../client/util/clock.ts";
import { ApiserverSource, type PodUpdate } from "../types/pod-update.ts";

const key = (p: Pod) => `${p.metadata.namespace}/${p.metadata.name}`;

/** UndeltaStore: a store that, after each change, hands the whole content to `push`. */
export function newUndeltaStore(push: (pods: Pod[]) => void): ReflectorStore<Pod> {
  const items = new Map<string, Pod>();
  const all = () => push([...items.values()]);
  return {
    add: (p) => {
      items.set(key(p), p);
      all();
    },
    update: (p) => {
      items.set(key(p), p);
      all();
    },
    delete: (p) => {
      items.delete(key(p));
      all();
    },
    replace: (list) => {
      items.clear();
      for (const p of list) items.set(key(p), p);
      all();
    },
    resync: () => {},
  };
}

// #region source-apiserver
/** Starts the source; it runs until `signal` aborts. */
export function newSourceApiserver(
  client: Clientset,
  nodeName: string,
  updates: (u: PodUpdate) => void,
  signal: AbortSignal,
  opts: { clock?: Clock } = {},
): Promise<void> {
  const lw = newListWatchFromClient<Pod>(client.restClientFor(Resources.pods), "pods", "", {
    fieldSelector: `spec.nodeName=${nodeName}`,
  });
  const store = newUndeltaStore((pods) => updates({ pods, op: "SET", source: ApiserverSource }));
  return new Reflector<Pod>(lw, store, { name: "kubelet-pods", clock: opts.clock }).run(signal);
}
// #endregion source-apiserver
