/**
 * The Endpoints controller — for every Service with a selector, an Endpoints object of the same
 * name listing the IPs of the pods it selects: the ready ones in `addresses`, the others in
 * `notReadyAddresses`, with the ports the Service's targetPorts resolve to on each pod.
 * Mirrors kubernetes/kubernetes pkg/controller/endpoint/endpoints_controller.go (Controller,
 * NewEndpointController, syncService, addEndpointSubset, truncateEndpoints, checkLeftoverEndpoints).
 *
 * Solves:
 * - a client of a Service (kube-proxy, a DNS server, `kubectl describe svc`) needs the pods that
 *   can serve *now*: a readiness probe that fails moves the pod to notReadyAddresses within one
 *   sync, and it comes back when the probe passes;
 * - level-triggered as every controller: pod and Service events only say which Service to look
 *   at; a sync recomputes the whole object from the caches, so a missed event cannot leave it wrong;
 * - a write only when something changed (subsets, labels, the over-capacity annotation): a pod's
 *   status heartbeat must not rewrite every Endpoints object it belongs to;
 * - an Endpoints object has a size limit: above 1000 addresses it is truncated (not-ready ones
 *   first) and annotated `endpoints.kubernetes.io/over-capacity: truncated` — EndpointSlices are
 *   the answer for bigger Services;
 * - after its own update, the cache may still hold the old version for a moment: a sync that
 *   reads that old resourceVersion again fails and retries instead of writing from stale data.
 *
 * Invariants:
 * - a Service of type ExternalName, or without a selector, gets nothing from this controller
 *   (its Endpoints, if any, are written by hand);
 * - a deleted Service's Endpoints are deleted; so are Endpoints left without a Service when the
 *   controller starts (except leader-election records);
 * - the Endpoints carry the Service's labels, plus `service.kubernetes.io/headless` for a Service
 *   without a cluster IP.
 *
 * What upstream does differently: it also writes `endpoints/restricted` for the API server's
 * check that a user may not point an Endpoints at an arbitrary IP; it exports metrics. The
 * EndpointSlice controller (../endpointslice/) runs beside it: kubectl 1.32's `get endpoints`
 * reads this object, but `describe service` lists EndpointSlices (`kubernetes.io/service-name=<svc>`).
 *
 * @upstream kubernetes/kubernetes pkg/controller/endpoint/endpoints_controller.go (Controller, NewEndpointController, Run, onServiceUpdate, onServiceDelete, addPod, updatePod, deletePod, onEndpointsDelete, syncService, addEndpointSubset, truncateEndpoints, addressSubset, capacityAnnotationSetCorrectly, checkLeftoverEndpoints, maxCapacity, truncated)
 * @upstream kubernetes/kubernetes pkg/controller/endpoint/endpoints_controller.go (staleEndpointsTracker)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/core.go (newEndpointsControllerDescriptor, startEndpointsController)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/well_known_annotations.go (EndpointsLastChangeTriggerTime, EndpointsOverCapacity)
 * @chapter 07-kubelet
 */
import type {
  EndpointAddress,
  EndpointPort,
  EndpointSubset,
  Endpoints,
  Pod,
  Service,
} from "../../api/core.ts";
import type { GroupVersionKind, GroupVersionResource } from "../../api/schema.ts";
import { isForbidden, isNotFound } from "../../client/errors.ts";
import { Resources } from "../../client/informers/factory.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import type { ResourceClient } from "../../client/kubernetes/resource.ts";
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
import { isPodReady } from "../active-pods.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";
import { newEventRecorder } from "../event-recorder.ts";
import type { EventRecorder } from "../pod-control.ts";
import { hasStatusCause, NamespaceTerminatingCause } from "../replicaset/replica-set.ts";
import {
  endpointPortFromServicePort,
  findPort,
  getPodServiceMemberships,
  getServicesToUpdateOnPodChange,
  podToEndpointAddressForService,
  serviceSelectsPod,
  shouldPodBeInEndpoints,
  shouldSetHostname,
} from "./endpoints-util.ts";
import { repackSubsets } from "./repack-subsets.ts";
import { TriggerTimeTracker } from "./trigger-time-tracker.ts";

export const services: GroupVersionResource = { group: "", version: "v1", resource: "services" };
export const endpoints: GroupVersionResource = { group: "", version: "v1", resource: "endpoints" };
const endpointsKind: GroupVersionKind = { group: "", version: "v1", kind: "Endpoints" };

/** v1.EndpointsLastChangeTriggerTime */
export const EndpointsLastChangeTriggerTime = "endpoints.kubernetes.io/last-change-trigger-time";
/** v1.EndpointsOverCapacity, and its one value. */
export const EndpointsOverCapacity = "endpoints.kubernetes.io/over-capacity";
export const truncated = "truncated";
/** v1.IsHeadlessService: the label on the Endpoints of a Service without a cluster IP. */
export const IsHeadlessService = "service.kubernetes.io/headless";
/** The annotation of a leader-election record kept in an Endpoints object (resourcelock). */
const LeaderElectionRecordAnnotationKey = "control-plane.alpha.kubernetes.io/leader";
/** The most addresses one Endpoints object holds (maxCapacity). */
export const maxCapacity = 1000;
/** Retries of one Service before it is dropped (maxRetries). */
export const maxRetries = 15;

export interface EndpointControllerOptions {
  clock?: Clock;
  /** `--endpoint-updates-batch-period`: pod changes wait this long, so a burst becomes one write. */
  endpointUpdatesBatchPeriodMs?: number;
  recorder?: EventRecorder;
  onError?: (key: string, err: unknown) => void;
}

/** Time as the annotation writes it: RFC 3339 with fractional seconds, UTC. */
const rfc3339Nano = (ms: number) => new Date(ms).toISOString();

export class EndpointController {
  readonly queue: TypedRateLimitingInterface<string>;
  readonly triggerTimeTracker = new TriggerTimeTracker();
  private readonly clock: Clock;
  private readonly batchPeriodMs: number;
  /** Endpoints key → the resourceVersion our last update replaced (staleEndpointsTracker). */
  private readonly staleEndpoints = new Map<string, string>();

  constructor(
    private readonly podInformer: SharedIndexInformer<Pod>,
    private readonly serviceInformer: SharedIndexInformer<Service>,
    private readonly endpointsInformer: SharedIndexInformer<Endpoints>,
    private readonly client: Clientset,
    private readonly opts: EndpointControllerOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.batchPeriodMs = opts.endpointUpdatesBatchPeriodMs ?? 0;
    this.queue = newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(this.clock), {
      name: "endpoint",
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
    // Someone deleted the Endpoints of a Service we manage: write them again.
    endpointsInformer.addEventHandler({
      onDelete: (obj) => {
        const ep = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (ep) this.queue.add(metaNamespaceKeyFunc(ep));
      },
    });
    // #endregion handlers
  }

  private allServices(): Service[] {
    return this.serviceInformer.getIndexer().list();
  }

  /** Pod changes wait out the batch period, so many pod events make one sync. */
  private enqueueAll(keys: Set<string>): void {
    for (const key of keys) this.queue.addAfter(key, this.batchPeriodMs);
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    const synced = await waitForCacheSyncWithClock(
      this.clock,
      signal,
      () => this.podInformer.hasSynced(),
      () => this.serviceInformer.hasSynced(),
      () => this.endpointsInformer.hasSynced(),
    );
    if (!synced) {
      this.queue.shutDown();
      return;
    }
    this.checkLeftoverEndpoints();
    await runWorkers(this.queue, workers, (key) => this.syncService(key), signal, {
      maxRetries,
      onError: (key, err) => this.opts.onError?.(key, err),
    });
  }

  /** Endpoints whose Service is gone (deleted while we were down) get synced — and so deleted. */
  checkLeftoverEndpoints(): void {
    for (const ep of this.endpointsInformer.getIndexer().list()) {
      if (ep.metadata.annotations?.[LeaderElectionRecordAnnotationKey] !== undefined) continue;
      this.queue.add(metaNamespaceKeyFunc(ep));
    }
  }

  /** The cached version is one our own update already replaced (or older): the cache lags. */
  private isStale(key: string, rv: string | undefined): boolean {
    const replaced = this.staleEndpoints.get(key);
    if (replaced === undefined || !rv) return false;
    // resourceVersions are etcd revisions: an older or equal one is stale.
    return /^\d+$/.test(rv) && /^\d+$/.test(replaced) ? BigInt(rv) <= BigInt(replaced) : rv === replaced;
  }

  private endpointsClient(namespace: string): ResourceClient<Endpoints> {
    return this.client.resource<Endpoints>(endpoints, namespace);
  }

  // #region sync-service
  async syncService(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const service = new NamespaceLister(this.serviceInformer.getIndexer(), namespace).get(name);
    if (!service) {
      // The Service is gone: so are its Endpoints.
      try {
        await this.endpointsClient(namespace).delete(name);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      this.triggerTimeTracker.deleteService(namespace, name);
      this.staleEndpoints.delete(key);
      return;
    }
    if (service.spec?.type === "ExternalName") return;
    // No selector: the Endpoints are someone else's to write.
    if (!service.spec?.selector || Object.keys(service.spec.selector).length === 0) return;

    const pods = new NamespaceLister(this.podInformer.getIndexer(), namespace)
      .list()
      .filter((p) => serviceSelectsPod(service, p));
    // Computed even if nothing is written, so the tracker's state follows every sync.
    const triggerTime = this.triggerTimeTracker.computeEndpointLastChangeTriggerTime(
      namespace,
      service,
      pods,
    );
    const publishNotReady = service.spec.publishNotReadyAddresses === true;
    let subsets: EndpointSubset[] = [];
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
      const address = podToEndpointAddressForService(service, pod);
      if (!address) continue; // no IP of the Service's family
      if (shouldSetHostname(pod, service)) address.hostname = pod.spec.hostname;
      const ports = service.spec.ports ?? [];
      if (ports.length === 0) {
        // A headless Service may have no ports: the address alone.
        if (service.spec.clusterIP === "None")
          subsets = addEndpointSubset(subsets, pod, address, undefined, publishNotReady);
        continue;
      }
      for (const servicePort of ports) {
        const portNum = findPort(pod, servicePort);
        if (portNum === undefined) continue; // this pod has no container port of that name
        subsets = addEndpointSubset(
          subsets,
          pod,
          address,
          endpointPortFromServicePort(servicePort, portNum),
          publishNotReady,
        );
      }
    }
    subsets = repackSubsets(subsets);

    const current = new NamespaceLister(this.endpointsInformer.getIndexer(), namespace).get(name) ?? {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { name, namespace, ...(service.metadata.labels ? { labels: service.metadata.labels } : {}) },
    };
    const epKey = `${namespace}/${name}`;
    if (this.isStale(epKey, current.metadata.resourceVersion))
      throw new EndpointsStaleError(
        `endpoints informer cache is out of date, resource version ${current.metadata.resourceVersion} already processed for endpoints ${epKey}`,
      );
    const create = !current.metadata.resourceVersion;
    const compareLabels = { ...(current.metadata.labels ?? {}) };
    delete compareLabels[IsHeadlessService];
    if (
      !create &&
      subsetsEqualIgnoreResourceVersion(current.subsets ?? [], subsets) &&
      JSON.stringify(sortedEntries(compareLabels)) ===
        JSON.stringify(sortedEntries(service.metadata.labels ?? {})) &&
      capacityAnnotationSetCorrectly(current.metadata.annotations, current.subsets ?? [])
    )
      return; // nothing changed: no write

    const next: Endpoints = structuredClone(current);
    next.subsets = subsets;
    const labels: Record<string, string> = { ...(service.metadata.labels ?? {}) };
    const annotations: Record<string, string> = { ...(next.metadata.annotations ?? {}) };
    if (triggerTime !== undefined) annotations[EndpointsLastChangeTriggerTime] = rfc3339Nano(triggerTime);
    else delete annotations[EndpointsLastChangeTriggerTime];
    if (truncateEndpoints(next)) annotations[EndpointsOverCapacity] = truncated;
    else delete annotations[EndpointsOverCapacity];
    const clusterIP = service.spec.clusterIP;
    if (!clusterIP || clusterIP === "None") labels[IsHeadlessService] = "";
    next.metadata.labels = labels;
    next.metadata.annotations = annotations;

    try {
      if (create) await this.endpointsClient(namespace).create(next);
      else {
        const updated = await this.endpointsClient(namespace).update(next);
        // Until the informer shows a newer version, a sync must not trust the one we replaced.
        if (updated.metadata.resourceVersion !== current.metadata.resourceVersion)
          this.staleEndpoints.set(epKey, current.metadata.resourceVersion ?? "");
      }
    } catch (err) {
      // A terminating namespace refuses creates for good: drop the key.
      if (create && isForbidden(err) && hasStatusCause(err, NamespaceTerminatingCause)) return;
      const message = err instanceof Error ? err.message : String(err);
      if (create)
        this.opts.recorder?.(
          next,
          "Warning",
          "FailedToCreateEndpoint",
          `Failed to create endpoint for service ${namespace}/${name}: ${message}`,
        );
      else
        this.opts.recorder?.(
          next,
          "Warning",
          "FailedToUpdateEndpoint",
          `Failed to update endpoint ${namespace}/${name}: ${message}`,
        );
      throw err;
    }
  }
  // #endregion sync-service
}

/** The error of a sync that found its own replaced version still in the cache (it is retried). */
export class EndpointsStaleError extends Error {
  override name = "EndpointsStaleError";
}

const sortedEntries = (m: Record<string, string>) => Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1));

// #region add-endpoint-subset
/** One subset for one (pod, port): its address ready or not (all ready if not-ready ones are published). */
export function addEndpointSubset(
  subsets: EndpointSubset[],
  pod: Pod,
  address: EndpointAddress,
  port: EndpointPort | undefined,
  tolerateUnreadyEndpoints: boolean,
): EndpointSubset[] {
  const ports = port ? [port] : [];
  if (tolerateUnreadyEndpoints || isPodReady(pod)) subsets.push({ addresses: [address], ports });
  else subsets.push({ notReadyAddresses: [address], ports });
  return subsets;
}
// #endregion add-endpoint-subset

/** Equal subsets, ignoring the pods' resourceVersions in targetRef (endpointSubsetsEqualIgnoreResourceVersion). */
export function subsetsEqualIgnoreResourceVersion(a: EndpointSubset[], b: EndpointSubset[]): boolean {
  const strip = (subsets: EndpointSubset[]) =>
    JSON.stringify(
      subsets.map((s) => {
        const addr = (list?: EndpointAddress[]) =>
          (list ?? []).map((x) => ({
            ip: x.ip,
            hostname: x.hostname ?? "",
            nodeName: x.nodeName ?? "",
            targetRef: x.targetRef ? { ...x.targetRef, resourceVersion: undefined } : undefined,
          }));
        return {
          addresses: addr(s.addresses),
          notReadyAddresses: addr(s.notReadyAddresses),
          ports: (s.ports ?? []).map((p) => ({
            name: p.name ?? "",
            port: p.port,
            protocol: p.protocol ?? "TCP",
            appProtocol: p.appProtocol ?? "",
          })),
        };
      }),
    );
  return strip(a) === strip(b);
}

/** The annotation is right when the object is within capacity and not marked truncated. */
export function capacityAnnotationSetCorrectly(
  annotations: Record<string, string> | undefined,
  subsets: EndpointSubset[],
): boolean {
  let n = 0;
  for (const s of subsets) n += (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0);
  if (n > maxCapacity) return false;
  return annotations?.[EndpointsOverCapacity] === undefined;
}

// #region truncate-endpoints
/**
 * Cuts the object down to maxCapacity addresses; true if it had to. Not-ready addresses go first;
 * if the ready ones alone are too many, every not-ready one goes and the ready ones are cut. Each
 * subset keeps its share of what stays (rounded up, so the last subsets may get less).
 */
export function truncateEndpoints(ep: Endpoints): boolean {
  const subsets = ep.subsets ?? [];
  let totalReady = 0;
  let totalNotReady = 0;
  for (const s of subsets) {
    totalReady += s.addresses?.length ?? 0;
    totalNotReady += s.notReadyAddresses?.length ?? 0;
  }
  if (totalReady + totalNotReady <= maxCapacity) return false;
  const truncateReady = totalReady > maxCapacity;
  const max = truncateReady ? maxCapacity : maxCapacity - totalReady;
  const numTotal = truncateReady ? totalReady : totalNotReady;
  let canBeAdded = max;
  for (const s of subsets) {
    const inSubset = (truncateReady ? s.addresses?.length : s.notReadyAddresses?.length) ?? 0;
    const toBeAdded = Math.min(Math.ceil((inSubset / numTotal) * max), canBeAdded);
    if (truncateReady) {
      s.addresses = (s.addresses ?? []).slice(0, toBeAdded);
      s.notReadyAddresses = [];
      canBeAdded -= s.addresses.length;
    } else {
      s.notReadyAddresses = (s.notReadyAddresses ?? []).slice(0, toBeAdded);
      canBeAdded -= s.notReadyAddresses.length;
    }
  }
  return true;
}
// #endregion truncate-endpoints

/** What kube-controller-manager wires: the controller over the shared informers. */
export function newEndpointController(
  ctx: Pick<ControllerContext, "informerFactory">,
  client: Clientset,
  opts: EndpointControllerOptions = {},
): EndpointController {
  const recorder = opts.recorder ?? newEventRecorder(client, "endpoint-controller", endpointsKind);
  return new EndpointController(
    ctx.informerFactory.informerFor(Resources.pods) as unknown as SharedIndexInformer<Pod>,
    ctx.informerFactory.informerFor(services) as unknown as SharedIndexInformer<Service>,
    ctx.informerFactory.informerFor(endpoints) as unknown as SharedIndexInformer<Endpoints>,
    client,
    { ...opts, recorder },
  );
}

/** startEndpointsController: `--concurrent-endpoint-syncs` workers, as the `endpoint-controller` account. */
export async function startEndpointsController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("endpoint-controller");
  const c = newEndpointController(ctx, client, {
    endpointUpdatesBatchPeriodMs: ctx.config.endpointUpdatesBatchPeriodMs,
    onError: (key, err) =>
      ctx.log(`error syncing service "${key}": ${err instanceof Error ? err.message : String(err)}`),
  });
  return { done: c.run(ctx.config.concurrentEndpointSyncs, ctx.signal) };
}
