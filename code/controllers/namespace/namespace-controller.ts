/**
 * NamespaceController — watches namespaces and, for each one being deleted, runs the deleter
 * (namespaced-resources-deleter.ts) until the namespace is empty and finalized.
 * Mirrors kubernetes/kubernetes pkg/controller/namespace/namespace_controller.go.
 *
 * Solves:
 * - the API server cannot delete a namespace's content inside one request (thousands of objects,
 *   graceful pods, finalizers): it marks the namespace Terminating and keeps it, held by the
 *   `kubernetes` finalizer; this loop does the long work and gives the finalizer back;
 * - content that takes time does not occupy a worker: the key comes back after the deleter's
 *   estimate (half of it, plus one second), other failures back off (5 ms doubling to 60 s).
 *
 * Invariants:
 * - only namespaces with a deletionTimestamp are queued, each a little later than its event
 *   (namespaceDeletionGracePeriod, 5 s) so objects created at the last moment are seen too;
 * - one key is never synced by two workers at once (the workqueue's rule).
 *
 * @upstream kubernetes/kubernetes pkg/controller/namespace/namespace_controller.go (NamespaceController, NewNamespaceController, nsControllerRateLimiter, enqueueNamespace, worker, syncNamespaceFromKey, namespaceDeletionGracePeriod)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/core.go (startNamespaceController, startModifiedNamespaceController)
 * @chapter 04-informers
 */
import type { Namespace } from "../../api/core.ts";
import { newDiscoveryClientForClientset } from "../../client/discovery/discovery-client.ts";
import { groupVersionResources } from "../../client/discovery/helper.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { waitForCacheSync } from "../../client/tools/cache/informer-factory.ts";
import type { Lister } from "../../client/tools/cache/listers.ts";
import { TokenBucket } from "../../client/util/flowcontrol/token-bucket.ts";
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
} from "../../client/util/workqueue/rate-limiters.ts";
import {
  newTypedRateLimitingQueueWithConfig,
  type TypedRateLimitingInterface,
} from "../../client/util/workqueue/rate-limiting-queue.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";
import { NamespacedResourcesDeleter, ResourcesRemainingError } from "./namespaced-resources-deleter.ts";

const namespacesResource = { group: "", version: "v1", resource: "namespaces" };
/** How long after a deletion event the namespace is looked at (namespaceDeletionGracePeriod). */
export const namespaceDeletionGracePeriodMs = 5000;

export interface NamespaceControllerOptions {
  /** Default namespaceDeletionGracePeriodMs (tests shorten it). */
  deletionGracePeriodMs?: number;
  /** When to look again while content remains; upstream: estimate/2 + 1 seconds. */
  remainingDelayMs?: (estimateSeconds: number) => number;
  resyncMs?: number;
  log?: (line: string) => void;
}

// #region rate-limiter
/** nsControllerRateLimiter: per item 5 ms doubling up to 60 s (not 1000 s), and 10 qps / 100 overall. */
function nsControllerRateLimiter() {
  return new MaxOfRateLimiter<string>(
    new ItemExponentialFailureRateLimiter<string>(5, 60_000),
    new BucketRateLimiter<string>(new TokenBucket(10, 100)),
  );
}
// #endregion rate-limiter

// #region controller
export class NamespaceController {
  readonly queue: TypedRateLimitingInterface<string>;
  private readonly lister: Lister<Namespace>;
  private readonly synced: () => boolean;
  private readonly deleter: NamespacedResourcesDeleter;
  private readonly log: (line: string) => void;

  constructor(
    client: Clientset,
    ctx: Pick<ControllerContext, "informerFactory">,
    private readonly opts: NamespaceControllerOptions = {},
  ) {
    this.log = opts.log ?? (() => {});
    this.queue = newTypedRateLimitingQueueWithConfig<string>(nsControllerRateLimiter(), {
      name: "namespace",
    });
    const discovery = newDiscoveryClientForClientset(client);
    this.deleter = new NamespacedResourcesDeleter(client, {
      // ServerPreferredNamespacedResources, flattened (discovery.GroupVersionResources); a
      // partial answer is still used, its error goes into the namespace's conditions.
      discoverResources: async () => {
        const { result, error } = await discovery.serverPreferredNamespacedResources();
        return { resources: groupVersionResources(result), error };
      },
    });
    const informer = ctx.informerFactory.informerFor(namespacesResource);
    // Resync: a namespace whose deletion failed for a reason no event will fix is tried again.
    const reg = informer.addEventHandler(
      {
        onAdd: (ns) => this.enqueueNamespace(ns as Namespace),
        onUpdate: (_old, ns) => this.enqueueNamespace(ns as Namespace),
      },
      opts.resyncMs,
    );
    this.lister = ctx.informerFactory.lister(namespacesResource) as Lister<Namespace>;
    this.synced = () => reg.hasSynced();
  }

  /** Only a namespace being deleted is work, and only after the grace period. */
  private enqueueNamespace(ns: Namespace): void {
    if (!ns.metadata.deletionTimestamp) return;
    this.queue.addAfter(
      ns.metadata.name ?? "",
      this.opts.deletionGracePeriodMs ?? namespaceDeletionGracePeriodMs,
    );
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log('"Starting namespace controller"');
    this.log('"Waiting for caches to sync" controller="namespace"');
    if (!(await waitForCacheSync(signal, this.synced))) {
      this.queue.shutDown();
      return;
    }
    this.log('"Caches are synced" controller="namespace"');
    const stop = () => this.queue.shutDown();
    signal.addEventListener("abort", stop, { once: true });
    try {
      await Promise.all(Array.from({ length: workers }, () => this.worker()));
    } finally {
      signal.removeEventListener("abort", stop);
    }
    this.log('"Shutting down namespace controller"');
  }

  // #region worker
  /**
   * The worker, written out rather than workqueue's runWorkers: "content remains" is not a
   * failure — it is requeued after the estimate, and the backoff is not counted up.
   */
  private async worker(): Promise<void> {
    for (;;) {
      const got = await this.queue.get();
      if (got.shutdown) return;
      const key = got.item;
      try {
        await this.syncNamespaceFromKey(key);
        this.queue.forget(key);
      } catch (err) {
        if (err instanceof ResourcesRemainingError) {
          const delay =
            this.opts.remainingDelayMs?.(err.estimate) ?? (Math.floor(err.estimate / 2) + 1) * 1000;
          this.queue.addAfter(key, delay);
        } else {
          // Rather than wait for a full resync, retry with backoff.
          this.queue.addRateLimited(key);
          this.log(`"Unhandled Error" err="deletion of namespace ${key} failed: ${(err as Error).message}"`);
        }
      } finally {
        this.queue.done(key);
      }
    }
  }
  // #endregion worker

  /** syncNamespaceFromKey: a namespace gone from the cache is done; else the deleter runs. */
  async syncNamespaceFromKey(key: string): Promise<void> {
    if (!this.lister.get(key)) return;
    await this.deleter.delete(key);
  }
}
// #endregion controller

/** startNamespaceController: `--concurrent-namespace-syncs` workers, resync `--namespace-sync-period`. */
export async function startNamespaceController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("namespace-controller");
  const c = new NamespaceController(client, ctx, {
    resyncMs: ctx.config.namespaceSyncPeriodMs,
    log: ctx.log,
    ...ctx.config.namespaceControllerTestOptions,
  });
  return { done: c.run(ctx.config.concurrentNamespaceSyncs, ctx.signal) };
}
