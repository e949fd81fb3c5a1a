/**
 * The EndpointSlice controller — for every Service with a selector, the EndpointSlices
 * (`kubernetes.io/service-name=<svc>`) listing the pods it selects, which `kubectl describe
 * service` and kube-proxy read.
 * Mirrors kubernetes/kubernetes pkg/controller/endpointslice/endpointslice_controller.go.
 *
 * Solves:
 * - level-triggered: Service, pod and node events only name a Service; a sync recomputes its
 *   slices from the caches (reconciler.ts decides, this file writes);
 * - its own writes must not look like someone else's: a tracker remembers the generation of every
 *   slice it wrote, so the echo of its own write does not trigger a sync, while a user's edit or
 *   delete of a managed slice does;
 * - a cache that has not yet seen the controller's last write would make it write again from stale
 *   data: such a sync fails ("EndpointSlice informer cache is out of date") and is retried.
 *
 * Invariants:
 * - a Service of type ExternalName or without a selector gets no slices from this controller;
 * - a deleted Service's slices are left to the garbage collector (they are owned by it);
 * - only slices labelled `endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io`
 *   are read or written.
 *
 * What upstream does differently: topology-aware hints, the last-change-trigger-time annotation,
 * metrics; it also re-queues Services whose pods' nodes change zone.
 *
 * @upstream kubernetes/kubernetes pkg/controller/endpointslice/endpointslice_controller.go (Controller, NewController, Run, syncService, onServiceUpdate, onServiceDelete, onEndpointSliceAdd, onEndpointSliceUpdate, onEndpointSliceDelete, addPod, updatePod, deletePod, queueServiceForEndpointSlice, dropEndpointSlicesPendingDeletion)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/endpointslice/endpointslice_tracker.go (EndpointSliceTracker: ShouldSync, StaleSlices, Update, ExpectDeletion, HandleDeletion, DeleteService)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/endpointslice/errors.go (StaleInformerCache)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/discovery.go (newEndpointSliceControllerDescriptor, startEndpointSliceController)
 * @upstream kubernetes/kubernetes pkg/controller/endpointslice/config/types.go (ConcurrentServiceEndpointSyncs, MaxEndpointsPerSlice, EndpointUpdatesBatchPeriod)
 * @chapter 07-kubelet
 */
import type { Node, Pod, Service } from "../../api/core.ts";
import { type EndpointSlice, LabelManagedBy, LabelServiceName } from "../../api/discovery.ts";
import type { GroupVersionKind, GroupVersionResource } from "../../api/schema.ts";
import { isNotFound } from "../../client/errors.ts";
import { Resources } from "../../client/informers/factory.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { DeletedFinalStateUnknown } from "../../client/tools/cache/delta-fifo.ts";
import { waitForCacheSyncWithClock } from "../../client/tools/cache/informer-factory.ts";
import { NamespaceLister } from "../../client/tools/cache/listers.ts";
import type { SharedIndexInformer } from "../../client/tools/cache/shared-informer.ts";
import { metaNamespaceKeyFunc, splitMetaNamespaceKey } from "../../client/tools/cache/store.ts";
import { type Clock, realClock } from "../../client/util/clock.ts";
import { defaultControllerRateLimiter } from "../../client/util/workqueue/rate-limiters.ts";
import {
  newTypedRateLimitingQueueWithConfig,
  type TypedRateLimitingInterface,
} from "../../client/util/workqueue/rate-limiting-queue.ts";
import { runWorkers } from "../../client/util/workqueue/worker.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";
import { services } from "../endpoint/endpoints-controller.ts";
import { getPodServiceMemberships, getServicesToUpdateOnPodChange } from "../endpoint/endpoints-util.ts";
import { newEventRecorder } from "../event-recorder.ts";
import type { EventRecorder } from "../pod-control.ts";
import { controllerName, reconcile } from "./reconciler.ts";

export const endpointSlices: GroupVersionResource = {
  group: "discovery.k8s.io",
  version: "v1",
  resource: "endpointslices",
};
/** Its events are about the Service whose slices failed to write. */
const serviceKind: GroupVersionKind = { group: "", version: "v1", kind: "Service" };
/** Retries of one Service before it is dropped (maxRetries). */
export const maxRetries = 15;

/** The error of a sync that saw a cache older than the controller's own writes (StaleInformerCache). */
export class StaleInformerCacheError extends Error {
  override name = "StaleInformerCacheError";
}

// #region tracker
/** A deletion the controller made and has not yet seen in its cache. */
const deletionExpected = -1;

/** EndpointSliceTracker: per Service, the generation of each slice as the controller last wrote it. */
export class EndpointSliceTracker {
  private readonly byService = new Map<string, Map<string, number>>();

  private gens(slice: EndpointSlice): Map<string, number> {
    const key = serviceKeyOf(slice);
    let m = this.byService.get(key);
    if (!m) {
      m = new Map();
      this.byService.set(key, m);
    }
    return m;
  }

  /** Our write of this slice succeeded: its echo in the cache is no news. */
  update(slice: EndpointSlice): void {
    this.gens(slice).set(slice.metadata.uid ?? "", slice.metadata.generation ?? 0);
  }

  expectDeletion(slice: EndpointSlice): void {
    this.gens(slice).set(slice.metadata.uid ?? "", deletionExpected);
  }

  /** A slice event is news (ShouldSync) unless it is a generation we wrote ourselves. */
  shouldSync(slice: EndpointSlice): boolean {
    const g = this.byService.get(serviceKeyOf(slice))?.get(slice.metadata.uid ?? "");
    return g === undefined || (slice.metadata.generation ?? 0) > g;
  }

  /** A deletion: true if we made it (HandleDeletion), and forget the slice either way. */
  handleDeletion(slice: EndpointSlice): boolean {
    const m = this.byService.get(serviceKeyOf(slice));
    const g = m?.get(slice.metadata.uid ?? "");
    m?.delete(slice.metadata.uid ?? "");
    return g === deletionExpected;
  }

  /** The cache is behind our writes (StaleSlices): a slice we deleted or updated shows older, or one we wrote is missing. */
  staleSlices(serviceKey: string, slices: readonly EndpointSlice[]): boolean {
    const m = this.byService.get(serviceKey);
    if (!m) return false;
    const seen = new Set<string>();
    for (const s of slices) {
      const uid = s.metadata.uid ?? "";
      seen.add(uid);
      const g = m.get(uid);
      if (g !== undefined && (g === deletionExpected || g > (s.metadata.generation ?? 0))) return true;
    }
    for (const [uid, g] of m) if (g !== deletionExpected && !seen.has(uid)) return true;
    return false;
  }

  deleteService(serviceKey: string): void {
    this.byService.delete(serviceKey);
  }
}
// #endregion tracker

const serviceKeyOf = (slice: EndpointSlice) =>
  `${slice.metadata.namespace ?? ""}/${slice.metadata.labels?.[LabelServiceName] ?? ""}`;
const isManaged = (slice: EndpointSlice) => slice.metadata.labels?.[LabelManagedBy] === controllerName;

export interface EndpointSliceControllerOptions {
  clock?: Clock;
  maxEndpointsPerSlice?: number;
  /** `--endpointslice-updates-batch-period`: pod changes wait this long, so a burst is one sync. */
  endpointUpdatesBatchPeriodMs?: number;
  recorder?: EventRecorder;
  onError?: (key: string, err: unknown) => void;
}

export class EndpointSliceController {
  readonly queue: TypedRateLimitingInterface<string>;
  readonly tracker = new EndpointSliceTracker();
  private readonly clock: Clock;
  private readonly batchPeriodMs: number;

  constructor(
    private readonly podInformer: SharedIndexInformer<Pod>,
    private readonly serviceInformer: SharedIndexInformer<Service>,
    private readonly nodeInformer: SharedIndexInformer<Node>,
    private readonly sliceInformer: SharedIndexInformer<EndpointSlice>,
    private readonly client: Clientset,
    private readonly opts: EndpointSliceControllerOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.batchPeriodMs = opts.endpointUpdatesBatchPeriodMs ?? 0;
    this.queue = newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(this.clock), {
      name: "endpoint_slice",
      clock: this.clock,
    });
    // #region handlers
    serviceInformer.addEventHandler({
      onAdd: (svc) => this.queue.add(metaNamespaceKeyFunc(svc)),
      onUpdate: (_old, svc) => this.queue.add(metaNamespaceKeyFunc(svc)),
      onDelete: (obj) => {
        const svc = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (svc) this.queue.add(metaNamespaceKeyFunc(svc));
      },
    });
    podInformer.addEventHandler({
      onAdd: (pod) => this.enqueueAll(getPodServiceMemberships(this.allServices(), pod)),
      onUpdate: (oldPod, pod) =>
        this.enqueueAll(getServicesToUpdateOnPodChange(this.allServices(), oldPod, pod)),
      onDelete: (obj) => {
        const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (pod) this.enqueueAll(getPodServiceMemberships(this.allServices(), pod));
      },
    });
    // A managed slice changed or vanished, and not by our hand: sync its Service.
    sliceInformer.addEventHandler({
      onAdd: (s) => {
        if (isManaged(s) && this.tracker.shouldSync(s)) this.queueServiceFor(s);
      },
      onUpdate: (old, s) => {
        // A slice whose managed-by or service-name label changed is news to both Services.
        if (
          old.metadata.labels?.[LabelManagedBy] !== s.metadata.labels?.[LabelManagedBy] ||
          old.metadata.labels?.[LabelServiceName] !== s.metadata.labels?.[LabelServiceName]
        ) {
          this.queueServiceFor(old);
          this.queueServiceFor(s);
        } else if (isManaged(s) && this.tracker.shouldSync(s)) this.queueServiceFor(s);
      },
      onDelete: (obj) => {
        const s = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (s && isManaged(s) && !this.tracker.handleDeletion(s)) this.queueServiceFor(s);
      },
    });
    // #endregion handlers
  }

  private allServices(): Service[] {
    return this.serviceInformer.getIndexer().list();
  }

  private enqueueAll(keys: Set<string>): void {
    for (const key of keys) this.queue.addAfter(key, this.batchPeriodMs);
  }

  private queueServiceFor(slice: EndpointSlice): void {
    const name = slice.metadata.labels?.[LabelServiceName];
    if (name) this.queue.add(`${slice.metadata.namespace ?? ""}/${name}`);
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    const synced = await waitForCacheSyncWithClock(
      this.clock,
      signal,
      () => this.podInformer.hasSynced(),
      () => this.serviceInformer.hasSynced(),
      () => this.nodeInformer.hasSynced(),
      () => this.sliceInformer.hasSynced(),
    );
    if (!synced) {
      this.queue.shutDown();
      return;
    }
    await runWorkers(this.queue, workers, (key) => this.syncService(key), signal, {
      maxRetries,
      onError: (key, err) => this.opts.onError?.(key, err),
    });
  }

  // #region sync-service
  async syncService(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const service = new NamespaceLister(this.serviceInformer.getIndexer(), namespace).get(name);
    if (!service) {
      // Its slices are owned by it: the garbage collector deletes them.
      this.tracker.deleteService(key);
      return;
    }
    if (service.spec?.type === "ExternalName") return;
    // No selector: the slices are someone else's to write.
    const selector = service.spec?.selector;
    if (!selector || Object.keys(selector).length === 0) return;

    const pods = new NamespaceLister(this.podInformer.getIndexer(), namespace)
      .list()
      .filter((p) => Object.entries(selector).every(([k, v]) => p.metadata.labels?.[k] === v));
    const slices = new NamespaceLister(this.sliceInformer.getIndexer(), namespace)
      .list()
      .filter((s) => s.metadata.labels?.[LabelServiceName] === name && isManaged(s))
      // dropEndpointSlicesPendingDeletion
      .filter((s) => !s.metadata.deletionTimestamp);
    if (this.tracker.staleSlices(key, slices)) {
      throw new StaleInformerCacheError(`EndpointSlice informer cache is out of date`);
    }
    const nodes = this.nodeInformer.getIndexer();
    const plan = reconcile({
      service,
      pods,
      existingSlices: slices,
      nodeByName: (n) => nodes.getByKey(n),
      maxEndpointsPerSlice: this.opts.maxEndpointsPerSlice,
    });
    const client = this.client.resource<EndpointSlice>(endpointSlices, namespace);
    try {
      // finalize: creates and updates before deletes, so the Service never has fewer endpoints than needed.
      for (const s of plan.create) this.tracker.update(await client.create(s));
      for (const s of plan.update) this.tracker.update(await client.update(s));
      for (const s of plan.delete) {
        try {
          await client.delete(s.metadata.name ?? "");
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
        this.tracker.expectDeletion(s);
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.opts.recorder?.(
        service,
        "Warning",
        "FailedToUpdateEndpointSlices",
        `Error updating Endpoint Slices for Service ${key}: ${message}`,
      );
      throw err;
    }
    if (plan.errors.length > 0) throw new Error(plan.errors.join("; "));
  }
  // #endregion sync-service
}

/** What kube-controller-manager wires: the controller over the shared informers. */
export function newEndpointSliceController(
  ctx: Pick<ControllerContext, "informerFactory">,
  client: Clientset,
  opts: EndpointSliceControllerOptions = {},
): EndpointSliceController {
  const recorder = opts.recorder ?? newEventRecorder(client, "endpoint-slice-controller", serviceKind);
  return new EndpointSliceController(
    ctx.informerFactory.informerFor(Resources.pods) as unknown as SharedIndexInformer<Pod>,
    ctx.informerFactory.informerFor(services) as unknown as SharedIndexInformer<Service>,
    ctx.informerFactory.informerFor(Resources.nodes) as unknown as SharedIndexInformer<Node>,
    ctx.informerFactory.informerFor(endpointSlices) as unknown as SharedIndexInformer<EndpointSlice>,
    client,
    { ...opts, recorder },
  );
}

/** startEndpointSliceController: `--concurrent-service-endpoint-syncs` workers, as `endpointslice-controller`. */
export async function startEndpointSliceController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("endpointslice-controller");
  const c = newEndpointSliceController(ctx, client, {
    maxEndpointsPerSlice: ctx.config.maxEndpointsPerSlice,
    endpointUpdatesBatchPeriodMs: ctx.config.endpointSliceUpdatesBatchPeriodMs,
    onError: (key, err) =>
      ctx.log(
        `error syncing endpoint slices for service "${key}": ${err instanceof Error ? err.message : String(err)}`,
      ),
  });
  return { done: c.run(ctx.config.concurrentServiceEndpointSyncs, ctx.signal) };
}
