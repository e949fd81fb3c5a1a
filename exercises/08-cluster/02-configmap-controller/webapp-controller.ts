// Exercise 8.2: a controller of your own, whose "API" is a ConfigMap. See README.md.
import type { Deployment } from "../../../code/api/apps.ts";
import type { ConfigMap } from "../../../code/api/core.ts";
import type { Clientset } from "../../../code/client/kubernetes/clientset.ts";
import type { DeletedFinalStateUnknown } from "../../../code/client/tools/cache/delta-fifo.ts";
import type { Lister } from "../../../code/client/tools/cache/listers.ts";
import type { ResourceEventHandler } from "../../../code/client/tools/cache/shared-informer.ts";

/** A ConfigMap with this label and value is a WebApp. */
export const kindLabel = "course.dev/kind";
export const kindWebApp = "WebApp";

/** What the reconcile function may use: a client to write with, the informers' caches to read. */
export interface WebAppContext {
  client: Clientset;
  configMaps: Lister<ConfigMap>;
  deployments: Lister<Deployment>;
}

/**
 * The ConfigMap informer's handlers: call `enqueue` with every ConfigMap (or the tombstone of a
 * deleted one) that the controller must look at.
 */
export function eventHandlers(
  enqueue: (obj: ConfigMap | DeletedFinalStateUnknown<ConfigMap>) => void,
): ResourceEventHandler<ConfigMap> {
  throw new Error(`TODO: the ConfigMap handlers (enqueue is ${typeof enqueue})`);
}

/**
 * Reconciles the WebApp `key` (`namespace/name`): make the cluster's Deployment of that name
 * match the ConfigMap, or do nothing if there is nothing to do. Throw to be retried later.
 */
export async function syncHandler(key: string, ctx: WebAppContext): Promise<void> {
  throw new Error(`TODO: reconcile ${key} (${typeof ctx})`);
}
