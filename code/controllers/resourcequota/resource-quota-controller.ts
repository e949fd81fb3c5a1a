/**
 * ResourceQuotaController — keeps every quota's `status` true: `status.hard` copied from
 * `spec.hard`, `status.used` recounted from the namespace's objects — when a quota is made or
 * its limits change, when the monitors see usage go down, and on a full resync.
 * Upstream: kubernetes/kubernetes pkg/controller/resourcequota/resource_quota_controller.go (Controller).
 *
 * Solves:
 * - admission charges a quota before an object is stored and never gives anything back; a pod
 *   deleted, a pod finished, a create refused after its charge (a later plugin said no) all leave
 *   `status.used` too high. This loop recounts, so the quota converges on what really exists;
 * - a quota made when objects exist already starts with their usage, not zero;
 * - a quota waiting for its first count blocks admission of its namespace's requests (admission
 *   must know the usage before it can judge), so such quotas go to a second queue of their own,
 *   served by as many workers as the first: a five-minute resync of a thousand quotas never
 *   delays the new one.
 *
 * Invariants:
 * - one quota key is recounted by one worker at a time (the workqueue's rule), in either queue;
 * - a quota is recounted from the informers' caches only after every monitored cache has synced:
 *   a half-filled cache would write a usage too low, and admission would let too much in;
 * - the status write carries the resourceVersion of the quota read, so a charge admission made
 *   meanwhile is never overwritten with an older count: the write fails with 409 and the key is
 *   retried with backoff against the fresh quota;
 * - status is written only when it changes (a new spec, a different count), not on every resync;
 * - an update of a quota queues it only if `spec.hard` changed: the quota's own status writes
 *   (admission's, this controller's) come back as updates and must not start a recount each.
 *
 * @upstream kubernetes/kubernetes pkg/controller/resourcequota/resource_quota_controller.go (Controller, NewController, addQuota, enqueueAll, worker, Run, syncResourceQuotaFromKey, syncResourceQuota, replenishQuota)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/core.go (startResourceQuotaController)
 * @upstream kubernetes/kubernetes pkg/controller/resourcequota/config/types.go (ResourceQuotaControllerConfiguration: ResourceQuotaSyncPeriod, ConcurrentResourceQuotaSyncs)
 * @chapter 04-informers
 */
import type { ResourceQuota } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import type { GroupVersionResource } from "../../api/schema.ts";
import { newDiscoveryClientForClientset } from "../../client/discovery/discovery-client.ts";
import { groupVersionResources } from "../../client/discovery/helper.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { ResourceClient } from "../../client/kubernetes/resource.ts";
import { deletionHandlingMetaNamespaceKeyFunc } from "../../client/tools/cache/delta-fifo.ts";
import { type SharedInformerFactory, waitForCacheSync } from "../../client/tools/cache/informer-factory.ts";
import type { Lister } from "../../client/tools/cache/listers.ts";
import { metaNamespaceKeyFunc, splitMetaNamespaceKey } from "../../client/tools/cache/store.ts";
import { type Clock, realClock, sleep } from "../../client/util/clock.ts";
import { defaultControllerRateLimiter } from "../../client/util/workqueue/rate-limiters.ts";
import {
  newTypedRateLimitingQueueWithConfig,
  type TypedRateLimitingInterface,
} from "../../client/util/workqueue/rate-limiting-queue.ts";
import { runWorkers } from "../../client/util/workqueue/worker.ts";
import { resourceForQuotaName } from "../../quota/evaluator.ts";
import { equalLists, maskList, type ResourceList } from "../../quota/resources.ts";
import { calculateUsage, type GroupResource } from "../../quota/usage.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";
import { QuotaMonitor, quotableResources } from "./resource-quota-monitor.ts";

const resourceQuotas: GroupVersionResource = { group: "", version: "v1", resource: "resourcequotas" };

export interface ResourceQuotaControllerOptions {
  /** `--resource-quota-sync-period`: how often every quota is recounted (upstream 5 m). */
  resyncPeriodMs: number;
  /** The namespaced resources to monitor (from discovery, GetQuotableResources). */
  resources: readonly GroupVersionResource[];
  clock?: Clock;
  log?: (line: string) => void;
}

/** The hard names whose usage a resource's objects make (the evaluator's MatchingResources). */
function matchingResources(gr: GroupResource, hard: ResourceList): string[] {
  return Object.keys(hard).filter((name) => {
    const r = resourceForQuotaName(name);
    return r !== undefined && r.group === gr.group && r.resource === gr.resource;
  });
}

// #region controller
export class ResourceQuotaController {
  /** Quotas to recount (resourcequota_primary). */
  readonly queue: TypedRateLimitingInterface<string>;
  /** Quotas whose usage admission is waiting for (resourcequota_priority). */
  readonly missingUsageQueue: TypedRateLimitingInterface<string>;
  readonly monitor: QuotaMonitor;
  private readonly quotaLister: Lister<ResourceQuota>;
  private readonly synced: (() => boolean)[];
  private readonly clock: Clock;
  private readonly log: (line: string) => void;

  constructor(
    private readonly client: Clientset,
    factory: SharedInformerFactory,
    private readonly opts: ResourceQuotaControllerOptions,
  ) {
    this.clock = opts.clock ?? realClock;
    this.log = opts.log ?? (() => {});
    const queue = (name: string) =>
      newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(this.clock), {
        name,
        clock: this.clock,
      });
    this.queue = queue("resourcequota_primary");
    this.missingUsageQueue = queue("resourcequota_priority");
    const informer = factory.informerFor(resourceQuotas);
    const reg = informer.addEventHandler({
      onAdd: (q) => this.addQuota(q as ResourceQuota),
      onUpdate: (oldQ, newQ) => {
        // Only a change of the limits is work; the status updates are this loop's and admission's own.
        if (equalLists((oldQ as ResourceQuota).spec?.hard, (newQ as ResourceQuota).spec?.hard)) return;
        this.addQuota(newQ as ResourceQuota);
      },
      // The sync finds the quota gone and does nothing; kept for upstream's shape.
      onDelete: (q) => this.queue.add(deletionHandlingMetaNamespaceKeyFunc(q)),
    });
    this.quotaLister = factory.lister(resourceQuotas) as Lister<ResourceQuota>;
    this.monitor = new QuotaMonitor(factory, (gr, ns) => this.replenishQuota(gr, ns), {
      now: () => new Date(this.clock.now()),
    });
    this.monitor.syncMonitors(opts.resources);
    this.synced = [() => reg.hasSynced(), () => this.monitor.isSynced()];
  }

  // #region add-quota
  /** addQuota: a quota with limits not yet counted goes to the priority queue. */
  private addQuota(quota: ResourceQuota): void {
    const key = metaNamespaceKeyFunc(quota);
    const hard = quota.status?.hard;
    if (!equalLists(quota.spec?.hard, hard)) {
      this.missingUsageQueue.add(key);
      return;
    }
    // A limit with no usage that some monitored resource could give.
    for (const name of Object.keys(hard ?? {})) {
      const r = resourceForQuotaName(name);
      if (!(name in (quota.status?.used ?? {})) && r && this.monitor.has(r)) {
        this.missingUsageQueue.add(key);
        return;
      }
    }
    this.queue.add(key);
  }
  // #endregion add-quota

  /** enqueueAll: every quota, for the full recount every resync period. */
  private enqueueAll(): void {
    for (const q of this.quotaLister.list()) this.queue.add(metaNamespaceKeyFunc(q));
  }

  // #region replenish
  /** replenishQuota: objects of `gr` in `namespace` went away; recount the quotas that count them. */
  replenishQuota(gr: GroupResource, namespace: string): void {
    if (!this.monitor.has(gr)) return;
    for (const q of this.quotaLister.byNamespace(namespace).list()) {
      if (matchingResources(gr, q.status?.hard ?? {}).length > 0) this.queue.add(metaNamespaceKeyFunc(q));
    }
  }
  // #endregion replenish

  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log('"Starting resource quota controller"');
    if (!(await waitForCacheSync(signal, ...this.synced))) {
      this.queue.shutDown();
      this.missingUsageQueue.shutDown();
      return;
    }
    const onError = (key: string, err: unknown) =>
      this.log(`"Unhandled Error" err="syncing resource quota ${key}: ${(err as Error).message ?? err}"`);
    const sync = (key: string) => this.syncResourceQuotaFromKey(key);
    await Promise.all([
      runWorkers(this.queue, workers, sync, signal, { onError }),
      runWorkers(this.missingUsageQueue, workers, sync, signal, { onError }),
      this.resyncLoop(signal),
    ]);
    this.log('"Shutting down resource quota controller"');
  }

  /** wait.Until(enqueueAll, resyncPeriod): once at start, then every period. */
  private async resyncLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.enqueueAll();
      await sleep(this.clock, this.opts.resyncPeriodMs, signal);
    }
  }

  async syncResourceQuotaFromKey(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const quota = this.quotaLister.byNamespace(namespace).get(name);
    if (!quota) return; // deleted: nothing to keep true
    await this.syncResourceQuota(quota);
  }

  // #region sync
  /** syncResourceQuota: status.hard ← spec.hard, status.used ← the count; written if it changed. */
  async syncResourceQuota(quota: ResourceQuota): Promise<void> {
    const hard = quota.spec?.hard ?? {};
    const namespace = quota.metadata.namespace ?? "";
    let dirty = !equalLists(hard, quota.status?.hard) || !quota.status?.hard || !quota.status?.used;
    const newUsage = await calculateUsage(
      quota,
      (gr) => this.monitor.listerFor(gr, namespace)?.list() as KubeObject[] | undefined,
      { now: new Date(this.clock.now()) },
    );
    // A name no monitor can count keeps what it had; every name not limited any more goes.
    const used = maskList({ ...quota.status?.used, ...newUsage }, Object.keys(hard));
    dirty ||= !equalLists(used, quota.status?.used);
    if (!dirty) return;
    const quotas = new ResourceClient<ResourceQuota>(
      this.client.coreV1.restClient,
      "resourcequotas",
      namespace,
    );
    // resourceVersion kept: a quota admission charged since the cache saw it is a 409, not a lost charge.
    await quotas.updateStatus({ ...quota, status: { hard: { ...hard }, used } });
  }
  // #endregion sync
}
// #endregion controller

// #region start
/**
 * startResourceQuotaController: discovery for the resources to monitor, the shared informers,
 * `--concurrent-resource-quota-syncs` workers on each queue, `--resource-quota-sync-period`.
 */
export async function startResourceQuotaController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("resourcequota-controller");
  const discovered = await newDiscoveryClientForClientset(client).serverPreferredNamespacedResources();
  // A group that failed discovery is left unmonitored (upstream logs it and retries in 30 s).
  if (discovered.error)
    ctx.log(`"Unhandled Error" err="quota monitor discovery: ${discovered.error.message}"`);
  const c = new ResourceQuotaController(client, ctx.informerFactory, {
    resyncPeriodMs: ctx.config.resourceQuotaSyncPeriodMs,
    resources: quotableResources(groupVersionResources(discovered.result)),
    log: ctx.log,
  });
  return { done: c.run(ctx.config.concurrentResourceQuotaSyncs, ctx.signal) };
}
// #endregion start
