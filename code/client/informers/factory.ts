/**
 * newSharedInformerFactory — the informer factory over a real clientset: every informer it makes
 * lists and watches its resource through the clientset's RESTClient for that group version.
 * Mirrors kubernetes/client-go informers/factory.go (NewSharedInformerFactory,
 * NewSharedInformerFactoryWithOptions), whose generated per-resource informers each call
 * cache.NewListWatchFromClient on the typed client.
 *
 * Solves:
 * - tools/cache's SharedInformerFactory knows only "a function that makes a ListerWatcher", so it
 *   can be tested with a fake source; this is the one place that function is bound to HTTP, so a
 *   component writes `newSharedInformerFactory(clientset, 0).informerFor(pods)` and nothing else.
 *
 * Invariants: an informer's list and watch go through the same clientset as the component's
 * writes — one rate limiter, one transport, one identity.
 *
 * @upstream kubernetes/client-go informers/factory.go (NewSharedInformerFactory, NewSharedInformerFactoryWithOptions)
 * @upstream kubernetes/client-go tools/cache/listwatch.go (NewFilteredListWatchFromClient)
 * @chapter 04-informers
 */

import type { GroupVersionResource } from "../../api/schema.ts";
import type { Clientset } from "../kubernetes/clientset.ts";
import { SharedInformerFactory, type SharedInformerFactoryOptions } from "../tools/cache/informer-factory.ts";
import { type ListOptions, newFilteredListWatchFromClient } from "../tools/cache/listwatch.ts";

// #region new-shared-informer-factory
export function newSharedInformerFactory(
  client: Clientset,
  defaultResyncMs: number,
  opts: SharedInformerFactoryOptions = {},
): SharedInformerFactory {
  return new SharedInformerFactory(
    (gvr: GroupVersionResource, namespace: string, tweak?: (o: ListOptions) => void) =>
      newFilteredListWatchFromClient(client.restClientFor(gvr), gvr.resource, namespace, (o) => {
        const copy = { ...o };
        tweak?.(copy);
        return copy;
      }),
    defaultResyncMs,
    opts,
  );
}
// #endregion new-shared-informer-factory

/** The resources the course's components watch, by the names client-go's listers use. */
export const Resources = {
  pods: { group: "", version: "v1", resource: "pods" },
  nodes: { group: "", version: "v1", resource: "nodes" },
  namespaces: { group: "", version: "v1", resource: "namespaces" },
  serviceAccounts: { group: "", version: "v1", resource: "serviceaccounts" },
  replicaSets: { group: "apps", version: "v1", resource: "replicasets" },
  deployments: { group: "apps", version: "v1", resource: "deployments" },
  leases: { group: "coordination.k8s.io", version: "v1", resource: "leases" },
} as const satisfies Record<string, GroupVersionResource>;
