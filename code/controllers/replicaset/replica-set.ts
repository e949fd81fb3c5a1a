/**
 * ReplicaSetController — keeps the number of pods of each ReplicaSet at `spec.replicas`: it
 * compares desired with actual on every change, creates or deletes the difference, and reports
 * what it counted in the status.
 * Mirrors kubernetes/kubernetes pkg/controller/replicaset/replica_set.go (ReplicaSetController,
 * NewReplicaSetController, NewBaseController, Run, addRS/updateRS/deleteRS, addPod/updatePod/
 * deletePod, resolveControllerRef, getPodReplicaSets, manageReplicas, syncReplicaSet, claimPods,
 * getPodsToDelete, getPodsRankedByRelatedPodsOnSameNode, getIndirectlyRelatedPods, BurstReplicas).
 *
 * Solves:
 * - level-triggered: the handlers only say *which* ReplicaSet to look at (its key goes on the
 *   workqueue); the sync reads the whole current state from the caches and computes the diff, so a
 *   missed, merged or repeated event cannot make it wrong;
 * - a slow watch must not double the pods: every create and delete is first written down as an
 *   expectation, and a sync does nothing to pods until the informer has shown them all (or 5
 *   minutes passed) — the status is still written;
 * - a burst of 10,000 replicas must not flood the API server: at most burstReplicas (500) pods
 *   are created or deleted per sync, creates in slow-start batches;
 * - scale-down removes the pods that matter least first (active-pods.ts ranking).
 *
 * Invariants:
 * - a key is synced by one worker at a time (the workqueue's processing set);
 * - between expectCreations(n) and the n-th creationObserved (or a failed create lowering it),
 *   manageReplicas is not called for that ReplicaSet;
 * - only active pods (not terminating, not Succeeded / Failed) that the ReplicaSet controls after
 *   claimPods are counted.
 *
 * @upstream kubernetes/kubernetes pkg/controller/replicaset/replica_set.go (ReplicaSetController, NewBaseController, Run, worker, processNextWorkItem, addRS, updateRS, deleteRS, addPod, updatePod, deletePod, resolveControllerRef, getPodReplicaSets, manageReplicas, syncReplicaSet, claimPods, getPodsToDelete, getPodsRankedByRelatedPodsOnSameNode, getIndirectlyRelatedPods, getReplicaSetsWithSameController, BurstReplicas, controllerUIDIndex)
 * @upstream kubernetes/client-go listers/apps/v1/replicaset_expansion.go (GetPodReplicaSets)
 * @upstream kubernetes/apimachinery pkg/api/errors/errors.go (HasStatusCause)
 * @chapter 04-informers
 */

import type { ReplicaSet } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import { isEmptySelector, labelSelectorAsSelector, selectorMatches } from "../../api/labels.ts";
import type { KubeObject, OwnerReference } from "../../api/meta.ts";
import type { GroupVersionKind } from "../../api/schema.ts";
import { isNotFound, StatusError } from "../../client/errors.ts";
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
import { type ComponentTracerProvider, noopProvider } from "../../tracing/provider.ts";
import { startSpan } from "../../tracing/tracing.ts";
import {
  filterActivePods,
  isPodActive,
  isPodReady,
  type RankedPod,
  sortActivePodsWithRanks,
} from "../active-pods.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";
import {
  AdoptionError,
  PodControllerRefManager,
  recheckDeletionTimestamp,
} from "../controller-ref-manager.ts";
import { newEventRecorder } from "../event-recorder.ts";
import { ControllerExpectations, UIDTrackingControllerExpectations } from "../expectations.ts";
import {
  type EventRecorder,
  getControllerOf,
  newControllerRef,
  type PodControlInterface,
  RealPodControl,
  SlowStartInitialBatchSize,
} from "../pod-control.ts";
import { calculateStatus, updateReplicaSetStatus } from "./replica-set-utils.ts";
import { slowStartBatch } from "./slow-start-batch.ts";

/** At most this many pods are created or deleted by one sync (BurstReplicas). */
export const BurstReplicas = 500;
/** The ReplicaSet index by the UID of its own controller (a Deployment). */
export const controllerUIDIndex = "controllerUID";

/** The Status cause of a create refused because its namespace is terminating (v1.NamespaceTerminatingCause). */
export const NamespaceTerminatingCause = "NamespaceTerminating";

/** Whether the error's Status lists a cause of that type (apierrors.HasStatusCause). */
export function hasStatusCause(err: unknown, type: string): boolean {
  return err instanceof StatusError && (err.status.details?.causes ?? []).some((c) => c.reason === type);
}

const replicaSetKind: GroupVersionKind = { group: "apps", version: "v1", kind: "ReplicaSet" };

export interface ReplicaSetControllerOptions {
  /**
   * chapter 8: tracing — each sync a `syncReplicaSet` span, so the pods it creates start their
   * trace here (a course addition: upstream 1.32's controllers do not trace).
   */
  tracerProvider?: ComponentTracerProvider;
  /** Default 500 (kube-controller-manager has no flag for it). */
  burstReplicas?: number;
  clock?: Clock;
  /** Swap how pods are created and deleted (tests); default: through the clientset. */
  podControl?: PodControlInterface;
  /** Told of SuccessfulCreate / FailedCreate / SuccessfulDelete / FailedDelete. */
  recorder?: EventRecorder;
  /** Told of every failed sync (upstream: utilruntime.HandleError, a log line). */
  onError?: (key: string, err: unknown) => void;
}

export class ReplicaSetController {
  readonly expectations: UIDTrackingControllerExpectations;
  readonly queue: TypedRateLimitingInterface<string>;
  private readonly burstReplicas: number;
  private readonly clock: Clock;
  private readonly podControl: PodControlInterface;

  constructor(
    private readonly podInformer: SharedIndexInformer<Pod>,
    private readonly rsInformer: SharedIndexInformer<ReplicaSet>,
    private readonly client: Clientset,
    private readonly opts: ReplicaSetControllerOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.burstReplicas = opts.burstReplicas ?? BurstReplicas;
    this.podControl = opts.podControl ?? new RealPodControl(client, opts.recorder);
    this.expectations = new UIDTrackingControllerExpectations(new ControllerExpectations(this.clock));
    this.queue = newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(this.clock), {
      name: "replicaset",
      clock: this.clock,
    });
    // #region handlers
    rsInformer.addEventHandler({
      onAdd: (rs) => this.enqueueRS(rs),
      onUpdate: (oldRS, curRS) => this.updateRS(oldRS, curRS),
      onDelete: (obj) => this.deleteRS(obj),
    });
    rsInformer.addIndexers({
      [controllerUIDIndex]: (rs) => {
        const ref = getControllerOf(rs);
        return ref ? [ref.uid] : [];
      },
    });
    podInformer.addEventHandler({
      onAdd: (pod) => this.addPod(pod),
      onUpdate: (oldPod, curPod) => this.updatePod(oldPod, curPod),
      onDelete: (obj) => this.deletePod(obj),
    });
    // #endregion handlers
  }

  // #region run
  /** Waits for both caches, then runs `workers` workers until `signal` aborts. */
  async run(workers: number, signal: AbortSignal): Promise<void> {
    const synced = await waitForCacheSyncWithClock(
      this.clock,
      signal,
      () => this.podInformer.hasSynced(),
      () => this.rsInformer.hasSynced(),
    );
    if (!synced) {
      this.queue.shutDown();
      return;
    }
    const tp = this.opts.tracerProvider ?? noopProvider;
    const sync = (key: string) =>
      startSpan(
        tp,
        "k8s.io/kubernetes/pkg/controller/replicaset",
        "syncReplicaSet",
        { "k8s.replicaset": key },
        () => this.syncReplicaSet(key),
      );
    await runWorkers(this.queue, workers, sync, signal, {
      onError: (key, err) => this.opts.onError?.(key, err),
    });
  }
  // #endregion run

  private rsLister(namespace: string): NamespaceLister<ReplicaSet> {
    return new NamespaceLister(this.rsInformer.getIndexer(), namespace);
  }

  private enqueueRS(rs: ReplicaSet): void {
    this.queue.add(metaNamespaceKeyFunc(rs));
  }

  private updateRS(oldRS: ReplicaSet, curRS: ReplicaSet): void {
    // Deleted and recreated under the same name between two events: the old one's expectations go.
    if (oldRS.metadata.uid !== curRS.metadata.uid)
      this.deleteRS(new DeletedFinalStateUnknown(metaNamespaceKeyFunc(oldRS), oldRS));
    // Any update, not only a spec change: a resync then retries ReplicaSets whose creates failed.
    this.enqueueRS(curRS);
  }

  private deleteRS(obj: ReplicaSet | DeletedFinalStateUnknown<ReplicaSet>): void {
    const rs = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    if (!rs) return;
    const key = metaNamespaceKeyFunc(rs);
    // A new ReplicaSet of the same name must start with clean expectations.
    this.expectations.deleteExpectations(key);
    this.queue.add(key);
  }

  // #region resolve
  /** The ReplicaSet a controllerRef names, if it is one and the UID still matches (resolveControllerRef). */
  private resolveControllerRef(namespace: string, ref: OwnerReference): ReplicaSet | undefined {
    if (ref.kind !== replicaSetKind.kind) return undefined;
    const rs = this.rsLister(namespace).get(ref.name);
    // Same name, another object: the owner this pod names is gone.
    return rs && rs.metadata.uid === ref.uid ? rs : undefined;
  }

  /** The ReplicaSets whose selector matches an orphan (GetPodReplicaSets). */
  private getPodReplicaSets(pod: Pod): ReplicaSet[] {
    const labels = pod.metadata.labels ?? {};
    if (Object.keys(labels).length === 0) return [];
    return this.rsLister(pod.metadata.namespace ?? "")
      .list()
      .filter((rs) => {
        const sel = labelSelectorAsSelector(rs.spec.selector);
        // A ReplicaSet with an empty selector that crept in matches nothing, not everything.
        return sel.ok && !isEmptySelector(sel.value) && selectorMatches(sel.value, labels);
      });
  }
  // #endregion resolve

  // #region pod-handlers
  private addPod(pod: Pod): void {
    if (pod.metadata.deletionTimestamp) {
      // Seen for the first time already terminating (a restart of the controller): not a creation.
      this.deletePod(pod);
      return;
    }
    const ref = getControllerOf(pod);
    if (ref) {
      const rs = this.resolveControllerRef(pod.metadata.namespace ?? "", ref);
      if (!rs) return;
      const key = metaNamespaceKeyFunc(rs);
      this.expectations.creationObserved(key);
      this.queue.add(key);
      return;
    }
    // An orphan: wake every ReplicaSet that might adopt it; nobody waits for its creation.
    for (const rs of this.getPodReplicaSets(pod)) this.enqueueRS(rs);
  }

  private updatePod(oldPod: Pod, curPod: Pod): void {
    // A resync: the same version again.
    if (curPod.metadata.resourceVersion === oldPod.metadata.resourceVersion) return;
    const labelChanged =
      JSON.stringify(curPod.metadata.labels ?? {}) !== JSON.stringify(oldPod.metadata.labels ?? {});
    if (curPod.metadata.deletionTimestamp) {
      // A graceful delete started: count it now, so a replacement is made without waiting out the grace period.
      this.deletePod(curPod);
      if (labelChanged) this.deletePod(oldPod);
      return;
    }
    const curRef = getControllerOf(curPod);
    const oldRef = getControllerOf(oldPod);
    const refChanged = JSON.stringify(curRef) !== JSON.stringify(oldRef);
    if (refChanged && oldRef) {
      const rs = this.resolveControllerRef(oldPod.metadata.namespace ?? "", oldRef);
      if (rs) this.enqueueRS(rs);
    }
    if (curRef) {
      const rs = this.resolveControllerRef(curPod.metadata.namespace ?? "", curRef);
      if (!rs) return;
      this.enqueueRS(rs);
      // Ready now; available after minReadySeconds — no event will say so, so look again then (+1 s for skew).
      const minReady = rs.spec.minReadySeconds ?? 0;
      if (!isPodReady(oldPod) && isPodReady(curPod) && minReady > 0)
        this.queue.addAfter(metaNamespaceKeyFunc(rs), minReady * 1000 + 1000);
      return;
    }
    if (labelChanged || refChanged) for (const rs of this.getPodReplicaSets(curPod)) this.enqueueRS(rs);
  }

  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    if (!pod) return;
    const ref = getControllerOf(pod);
    if (!ref) return;
    const rs = this.resolveControllerRef(pod.metadata.namespace ?? "", ref);
    if (!rs) return;
    const key = metaNamespaceKeyFunc(rs);
    this.expectations.deletionObserved(key, metaNamespaceKeyFunc(pod));
    this.queue.add(key);
  }
  // #endregion pod-handlers

  // #region sync
  /** Reconciles one ReplicaSet: claim pods, act if expectations allow, write the status. */
  async syncReplicaSet(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const cached = this.rsLister(namespace).get(name);
    if (!cached) {
      this.expectations.deleteExpectations(key);
      return;
    }
    // Asked before listing pods: an observation arriving meanwhile must not be missed.
    const rsNeedsSync = this.expectations.satisfiedExpectations(key);
    const selector = labelSelectorAsSelector(cached.spec.selector);
    if (!selector.ok) {
      this.opts.onError?.(key, selector.error);
      return;
    }
    // Every pod of the namespace, so that pods still owned but no longer matching get released.
    const allPods = new NamespaceLister(this.podInformer.getIndexer(), namespace).list();
    const active = filterActivePods(allPods);
    const rs = structuredClone(cached);
    const manager = new PodControllerRefManager(
      this.podControl,
      rs,
      selector.value,
      replicaSetKind,
      recheckDeletionTimestamp(async () => {
        const fresh = await this.client.appsV1.replicaSets(namespace).get(name);
        if (fresh.metadata.uid !== rs.metadata.uid)
          throw new AdoptionError(
            `original ReplicaSet ${namespace}/${name} is gone: got uid ${fresh.metadata.uid}, wanted ${rs.metadata.uid}`,
          );
        return fresh;
      }),
    );
    const filteredPods = await manager.claimPods(active);

    let manageReplicasErr: unknown;
    if (rsNeedsSync && !rs.metadata.deletionTimestamp) {
      try {
        await this.manageReplicas(filteredPods, rs);
      } catch (err) {
        manageReplicasErr = err;
      }
    }
    const newStatus = calculateStatus(rs, filteredPods, manageReplicasErr, this.clock.now());
    const updated = await updateReplicaSetStatus(this.client.appsV1.replicaSets(namespace), rs, newStatus);
    // A last line of defence against clock skew: look again once the ready pods should be available.
    const replicas = updated.spec.replicas ?? 1;
    const minReady = updated.spec.minReadySeconds ?? 0;
    if (
      !manageReplicasErr &&
      minReady > 0 &&
      (updated.status?.readyReplicas ?? 0) === replicas &&
      (updated.status?.availableReplicas ?? 0) !== replicas
    )
      this.queue.addAfter(key, minReady * 1000);
    if (manageReplicasErr) throw manageReplicasErr;
  }
  // #endregion sync

  // #region manage-replicas
  /** Creates or deletes the difference between spec.replicas and the pods it owns. */
  async manageReplicas(filteredPods: Pod[], rs: ReplicaSet): Promise<void> {
    const key = metaNamespaceKeyFunc(rs);
    let diff = filteredPods.length - (rs.spec.replicas ?? 1);
    if (diff < 0) {
      diff = Math.min(-diff, this.burstReplicas);
      // Written down before the first create: its watch event may arrive before create returns.
      this.expectations.expectCreations(key, diff);
      const ref = newControllerRef(rs, replicaSetKind);
      const { successes, error } = await slowStartBatch(diff, SlowStartInitialBatchSize, async () => {
        try {
          await this.podControl.createPods(rs.metadata.namespace ?? "", rs.spec.template, rs, ref);
        } catch (err) {
          // The namespace is being deleted: every create will fail, and that is no failure of ours.
          if (!hasStatusCause(err, NamespaceTerminatingCause)) throw err;
        }
      });
      // Creates never attempted (or failed) will never be observed: stop waiting for them.
      for (let skipped = diff - successes; skipped > 0; skipped--) this.expectations.creationObserved(key);
      if (error) throw error;
    } else if (diff > 0) {
      diff = Math.min(diff, this.burstReplicas);
      const podsToDelete = getPodsToDelete(
        filteredPods,
        this.getIndirectlyRelatedPods(rs),
        diff,
        this.clock.now(),
      );
      // By key: the update setting deletionTimestamp and the final delete then count once.
      this.expectations.expectDeletions(key, podsToDelete.map(metaNamespaceKeyFunc));
      const errors: unknown[] = [];
      await Promise.all(
        podsToDelete.map(async (pod) => {
          try {
            await this.podControl.deletePod(rs.metadata.namespace ?? "", pod.metadata.name ?? "", rs);
          } catch (err) {
            // This deletion will never be observed.
            this.expectations.deletionObserved(key, metaNamespaceKeyFunc(pod));
            if (!isNotFound(err)) errors.push(err);
          }
        }),
      );
      if (errors.length > 0) throw errors[0];
    }
  }
  // #endregion manage-replicas

  /** The pods of every ReplicaSet with the same owner as `rs` (its Deployment's), `rs` included. */
  private getIndirectlyRelatedPods(rs: ReplicaSet): Pod[] {
    const ref = getControllerOf(rs);
    const related = ref ? this.rsInformer.getIndexer().byIndex(controllerUIDIndex, ref.uid) : [rs];
    const seen = new Set<string>();
    const pods: Pod[] = [];
    for (const other of related) {
      const sel = labelSelectorAsSelector(other.spec.selector);
      if (!sel.ok) continue;
      for (const pod of new NamespaceLister(
        this.podInformer.getIndexer(),
        other.metadata.namespace ?? "",
      ).list(sel.value)) {
        const uid = pod.metadata.uid ?? "";
        if (seen.has(uid)) continue;
        seen.add(uid);
        pods.push(pod);
      }
    }
    return pods;
  }
}

// #region pods-to-delete
/** The `diff` pods to delete: ranked by active-pods.ts, where rank = related pods on the same node. */
export function getPodsToDelete(filteredPods: Pod[], relatedPods: Pod[], diff: number, now: number): Pod[] {
  // Deleting all of them: no need to rank.
  if (diff >= filteredPods.length) return filteredPods.slice(0, diff);
  const podsOnNode = new Map<string, number>();
  for (const pod of relatedPods) {
    if (!isPodActive(pod)) continue;
    const node = pod.spec.nodeName ?? "";
    podsOnNode.set(node, (podsOnNode.get(node) ?? 0) + 1);
  }
  const ranked: RankedPod[] = filteredPods.map((pod) => ({
    pod,
    rank: podsOnNode.get(pod.spec.nodeName ?? "") ?? 0,
  }));
  return sortActivePodsWithRanks(ranked, now)
    .slice(0, diff)
    .map((r) => r.pod);
}
// #endregion pods-to-delete

// #region factory
/** What kube-controller-manager wires: the controller over shared informers and a clientset. */
export function newReplicaSetController(
  podInformer: SharedIndexInformer<KubeObject>,
  rsInformer: SharedIndexInformer<KubeObject>,
  client: Clientset,
  opts: ReplicaSetControllerOptions = {},
): ReplicaSetController {
  // Upstream's controller records its creates and deletes as Events; ours does so by default too.
  const recorder = opts.recorder ?? newEventRecorder(client, "replicaset-controller", replicaSetKind);
  return new ReplicaSetController(
    podInformer as unknown as SharedIndexInformer<Pod>,
    rsInformer as unknown as SharedIndexInformer<ReplicaSet>,
    client,
    { ...opts, recorder },
  );
}
// #endregion factory

// #region start
/**
 * The controller-manager's start function (upstream's cmd/kube-controller-manager/app/apps.go,
 * startReplicaSetController): the shared pod and ReplicaSet informers, the controller's own
 * client, `--concurrent-replicaset-syncs` workers.
 */
export async function startReplicaSetController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("replicaset-controller");
  const c = newReplicaSetController(
    ctx.informerFactory.informerFor(Resources.pods),
    ctx.informerFactory.informerFor(Resources.replicaSets),
    client,
    {
      onError: (key, err) =>
        ctx.log(`error syncing ReplicaSet ${key}: ${err instanceof Error ? err.message : String(err)}`),
      tracerProvider: ctx.tracerProvider, // chapter 8
    },
  );
  return { done: c.run(ctx.config.concurrentReplicaSetSyncs, ctx.signal) };
}
// #endregion start
