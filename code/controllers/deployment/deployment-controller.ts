/**
 * DeploymentController — turns a Deployment (a pod template and a size) into ReplicaSets: one
 * per template revision, the newest grown and the older shrunk as the strategy says, and reports
 * the rollout in the Deployment's status.
 * Mirrors kubernetes/kubernetes pkg/controller/deployment/deployment_controller.go.
 *
 * Solves:
 * - a Deployment never touches pods: it sizes ReplicaSets, and the ReplicaSet controller makes
 *   the pods. So the controller watches Deployments (spec changes), ReplicaSets (their counts
 *   move as pods come and go) and — for Recreate only — pod deletions;
 * - level-triggered like every controller: a handler only names the Deployment to look at; the
 *   sync reads the whole state from the caches and takes one step;
 * - a ReplicaSet belongs to the Deployment its controllerRef names; orphans that match are
 *   adopted and owned ones that no longer match released (ReplicaSetControllerRefManager);
 * - what a sync does, in order: deleted → status only; pause/resume condition; paused → scale
 *   only; a scaling event → proportional scale; else the strategy's rollout step.
 *
 * Invariants:
 * - one worker per key at a time (the workqueue); a failing key is retried with backoff, at
 *   most maxRetries (15) times, then dropped until the next event;
 * - a Deployment with an empty selector (`{}`) selects every pod: it is refused with a warning
 *   event and never acted on;
 * - the sync acts on a deep copy; the cache is never written.
 *
 * @upstream kubernetes/kubernetes pkg/controller/deployment/deployment_controller.go (DeploymentController, NewDeploymentController, Run, addDeployment, updateDeployment, deleteDeployment, addReplicaSet, getDeploymentsForReplicaSet, updateReplicaSet, deleteReplicaSet, deletePod, enqueue, enqueueRateLimited, enqueueAfter, getDeploymentForPod, resolveControllerRef, worker, processNextWorkItem, handleErr, getReplicaSetsForDeployment, getPodMapForDeployment, syncDeployment, maxRetries)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/apps.go (startDeploymentController)
 * @chapter 04-informers
 */

import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import { isEmptySelector, labelSelectorAsSelector, selectorMatches } from "../../api/labels.ts";
import type { KubeObject, OwnerReference } from "../../api/meta.ts";
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
import { AdoptionError, recheckDeletionTimestamp } from "../controller-ref-manager.ts";
import { newEventRecorder } from "../event-recorder.ts";
import { type EventRecorder, getControllerOf } from "../pod-control.ts";
import { rolloutRecreate } from "./recreate.ts";
import {
  ReplicaSetControllerRefManager,
  type RSControlInterface,
  realRSControl,
} from "./replica-set-controller-ref-manager.ts";
import { rolloutRolling } from "./rolling.ts";
import {
  checkPausedConditions,
  type DeploymentSyncContext,
  deploymentKind,
  isScalingEvent,
  sync,
  syncStatusOnly,
  updateDeploymentStatus,
} from "./sync.ts";

/** Requeues of a failing key before it is dropped (maxRetries). */
export const maxRetries = 15;

export interface DeploymentControllerOptions {
  clock?: Clock;
  recorder?: EventRecorder;
  rsControl?: RSControlInterface;
  onError?: (key: string, err: unknown) => void;
}

export class DeploymentController implements DeploymentSyncContext {
  readonly queue: TypedRateLimitingInterface<string>;
  readonly clock: Clock;
  readonly recorder: EventRecorder;
  private readonly rsControl: RSControlInterface;

  constructor(
    private readonly dInformer: SharedIndexInformer<Deployment>,
    private readonly rsInformer: SharedIndexInformer<ReplicaSet>,
    private readonly podInformer: SharedIndexInformer<Pod>,
    readonly client: Clientset,
    private readonly opts: DeploymentControllerOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.recorder = opts.recorder ?? (() => {});
    this.rsControl = opts.rsControl ?? realRSControl(client);
    this.queue = newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(this.clock), {
      name: "deployment",
      clock: this.clock,
    });
    // #region handlers
    dInformer.addEventHandler({
      onAdd: (d) => this.enqueue(d),
      onUpdate: (_old, cur) => this.enqueue(cur),
      onDelete: (obj) => {
        const d = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (d) this.enqueue(d);
      },
    });
    rsInformer.addEventHandler({
      onAdd: (rs) => this.addReplicaSet(rs),
      onUpdate: (oldRS, curRS) => this.updateReplicaSet(oldRS, curRS),
      onDelete: (obj) => this.deleteReplicaSet(obj),
    });
    // Pods only matter to Recreate, and only their deletion: the moment the last old pod is gone.
    podInformer.addEventHandler({ onDelete: (obj) => this.deletePod(obj) });
    // #endregion handlers
  }

  async run(workers: number, signal: AbortSignal): Promise<void> {
    const synced = await waitForCacheSyncWithClock(
      this.clock,
      signal,
      () => this.dInformer.hasSynced(),
      () => this.rsInformer.hasSynced(),
      () => this.podInformer.hasSynced(),
    );
    if (!synced) {
      this.queue.shutDown();
      return;
    }
    await runWorkers(this.queue, workers, (key) => this.syncDeployment(key), signal, {
      maxRetries,
      onError: (key, err) => this.opts.onError?.(key, err),
    });
  }

  rsLister(namespace: string): NamespaceLister<ReplicaSet> {
    return new NamespaceLister(this.rsInformer.getIndexer(), namespace);
  }

  private dLister(namespace: string): NamespaceLister<Deployment> {
    return new NamespaceLister(this.dInformer.getIndexer(), namespace);
  }

  enqueue(d: Deployment): void {
    this.queue.add(metaNamespaceKeyFunc(d));
  }

  enqueueRateLimited(d: Deployment): void {
    this.queue.addRateLimited(metaNamespaceKeyFunc(d));
  }

  enqueueAfter(d: Deployment, ms: number): void {
    this.queue.addAfter(metaNamespaceKeyFunc(d), ms);
  }

  // #region rs-handlers
  /** The Deployment a controllerRef names, if it is one and the UID still matches (resolveControllerRef). */
  private resolveControllerRef(namespace: string, ref: OwnerReference): Deployment | undefined {
    if (ref.kind !== deploymentKind.kind) return undefined;
    const d = this.dLister(namespace).get(ref.name);
    return d && d.metadata.uid === ref.uid ? d : undefined;
  }

  /** The Deployments whose selector matches an orphan ReplicaSet (getDeploymentsForReplicaSet). */
  private getDeploymentsForReplicaSet(rs: ReplicaSet): Deployment[] {
    const labels = rs.metadata.labels ?? {};
    if (Object.keys(labels).length === 0) return [];
    return this.dLister(rs.metadata.namespace ?? "")
      .list()
      .filter((d) => {
        const sel = labelSelectorAsSelector(d.spec.selector);
        return sel.ok && !isEmptySelector(sel.value) && selectorMatches(sel.value, labels);
      });
  }

  private addReplicaSet(rs: ReplicaSet): void {
    if (rs.metadata.deletionTimestamp) {
      // Seen first while being deleted (a restart): treat it as deleted.
      this.deleteReplicaSet(rs);
      return;
    }
    const ref = getControllerOf(rs);
    if (ref) {
      const d = this.resolveControllerRef(rs.metadata.namespace ?? "", ref);
      if (d) this.enqueue(d);
      return;
    }
    // An orphan: every matching Deployment may want to adopt it.
    for (const d of this.getDeploymentsForReplicaSet(rs)) this.enqueue(d);
  }

  private updateReplicaSet(oldRS: ReplicaSet, curRS: ReplicaSet): void {
    // A resync: the same version again, nothing to do.
    if (curRS.metadata.resourceVersion === oldRS.metadata.resourceVersion) return;
    const curRef = getControllerOf(curRS);
    const oldRef = getControllerOf(oldRS);
    const refChanged = JSON.stringify(curRef) !== JSON.stringify(oldRef);
    if (refChanged && oldRef) {
      const d = this.resolveControllerRef(oldRS.metadata.namespace ?? "", oldRef);
      if (d) this.enqueue(d);
    }
    if (curRef) {
      const d = this.resolveControllerRef(curRS.metadata.namespace ?? "", curRef);
      if (d) this.enqueue(d);
      return;
    }
    const labelChanged =
      JSON.stringify(curRS.metadata.labels ?? {}) !== JSON.stringify(oldRS.metadata.labels ?? {});
    if (labelChanged || refChanged) for (const d of this.getDeploymentsForReplicaSet(curRS)) this.enqueue(d);
  }

  private deleteReplicaSet(obj: ReplicaSet | DeletedFinalStateUnknown<ReplicaSet>): void {
    const rs = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    if (!rs) return;
    const ref = getControllerOf(rs);
    if (!ref) return;
    const d = this.resolveControllerRef(rs.metadata.namespace ?? "", ref);
    if (d) this.enqueue(d);
  }

  /** A Recreate Deployment waits for its old pods to be gone: wake it when the last one goes (deletePod). */
  private deletePod(obj: Pod | DeletedFinalStateUnknown<Pod>): void {
    const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    if (!pod) return;
    const d = this.getDeploymentForPod(pod);
    if (!d) return;
    if (d.spec.strategy?.type !== "Recreate") return;
    const rsList = this.listOwnedReplicaSets(d);
    let numPods = 0;
    for (const pods of this.getPodMapForDeployment(d, rsList).values()) numPods += pods.length;
    if (numPods === 0) this.enqueue(d);
  }

  /** Pod → its ReplicaSet → that ReplicaSet's Deployment (getDeploymentForPod). */
  private getDeploymentForPod(pod: Pod): Deployment | undefined {
    const ref = getControllerOf(pod);
    if (ref?.kind !== "ReplicaSet") return undefined;
    const rs = this.rsLister(pod.metadata.namespace ?? "").get(ref.name);
    if (!rs || rs.metadata.uid !== ref.uid) return undefined;
    const rsRef = getControllerOf(rs);
    return rsRef ? this.resolveControllerRef(rs.metadata.namespace ?? "", rsRef) : undefined;
  }
  // #endregion rs-handlers

  /** The ReplicaSets in the cache that match `d` and name it as controller (util.ListReplicaSets). */
  private listOwnedReplicaSets(d: Deployment): ReplicaSet[] {
    const sel = labelSelectorAsSelector(d.spec.selector);
    if (!sel.ok) return [];
    return this.rsLister(d.metadata.namespace ?? "")
      .list(sel.value)
      .filter((rs) => getControllerOf(rs)?.uid === d.metadata.uid);
  }

  // #region claim
  /** Every ReplicaSet `d` owns, after adopting matching orphans and releasing its non-matching ones. */
  async getReplicaSetsForDeployment(d: Deployment): Promise<ReplicaSet[]> {
    const { namespace = "", name = "" } = d.metadata;
    // All of the namespace: those we own but that no longer match must be found to be released.
    const rsList = this.rsLister(namespace).list();
    const selector = labelSelectorAsSelector(d.spec.selector);
    if (!selector.ok)
      throw new Error(
        `deployment ${namespace}/${name} has invalid label selector: ${selector.error.message}`,
      );
    const canAdopt = recheckDeletionTimestamp(async () => {
      const fresh = await this.client.appsV1.deployments(namespace).get(name);
      if (fresh.metadata.uid !== d.metadata.uid)
        throw new AdoptionError(
          `original Deployment ${namespace}/${name} is gone: got uid ${fresh.metadata.uid}, wanted ${d.metadata.uid}`,
        );
      return fresh;
    });
    const cm = new ReplicaSetControllerRefManager(
      this.rsControl,
      d,
      selector.value,
      deploymentKind,
      canAdopt,
    );
    return cm.claimReplicaSets(rsList);
  }

  /**
   * The Deployment's pods by the UID of the ReplicaSet that controls them — terminating and
   * finished ones included: Recreate must see every pod still there (getPodMapForDeployment).
   */
  getPodMapForDeployment(d: Deployment, rsList: readonly ReplicaSet[]): Map<string, Pod[]> {
    const podMap = new Map<string, Pod[]>(rsList.map((rs) => [rs.metadata.uid ?? "", []]));
    const sel = labelSelectorAsSelector(d.spec.selector);
    if (!sel.ok) return podMap;
    for (const pod of new NamespaceLister(this.podInformer.getIndexer(), d.metadata.namespace ?? "").list(
      sel.value,
    )) {
      const ref = getControllerOf(pod);
      if (ref) podMap.get(ref.uid)?.push(pod);
    }
    return podMap;
  }
  // #endregion claim

  // #region sync-deployment
  /** One step for one Deployment (syncDeployment). */
  async syncDeployment(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const cached = this.dLister(namespace).get(name);
    // Deleted: its ReplicaSets are the garbage collector's.
    if (!cached) return;
    const d = structuredClone(cached);

    const sel = d.spec.selector;
    if (
      !sel ||
      (Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0)
    ) {
      this.recorder(
        d,
        "Warning",
        "SelectingAll",
        "This deployment is selecting all pods. A non-empty selector is required.",
      );
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        d.status = { ...d.status, observedGeneration: d.metadata.generation };
        await updateDeploymentStatus(this, d);
      }
      return;
    }

    const rsList = await this.getReplicaSetsForDeployment(d);
    const podMap = this.getPodMapForDeployment(d, rsList);

    if (d.metadata.deletionTimestamp) return syncStatusOnly(this, d, rsList);
    // Before anything else: a resumed Deployment must not time out for the time it was paused.
    await checkPausedConditions(this, d);
    if (d.spec.paused) return sync(this, d, rsList);
    if (await isScalingEvent(this, d, rsList)) return sync(this, d, rsList);

    const type = d.spec.strategy?.type ?? "RollingUpdate";
    if (type === "Recreate") return rolloutRecreate(this, d, rsList, podMap);
    if (type === "RollingUpdate") return rolloutRolling(this, d, rsList);
    throw new Error(`unexpected deployment strategy type: ${type}`);
  }
  // #endregion sync-deployment
}

// #region start
/** What kube-controller-manager wires: the controller over shared informers and a clientset. */
export function newDeploymentController(
  dInformer: SharedIndexInformer<KubeObject>,
  rsInformer: SharedIndexInformer<KubeObject>,
  podInformer: SharedIndexInformer<KubeObject>,
  client: Clientset,
  opts: DeploymentControllerOptions = {},
): DeploymentController {
  const recorder = opts.recorder ?? newEventRecorder(client, "deployment-controller", deploymentKind);
  return new DeploymentController(
    dInformer as unknown as SharedIndexInformer<Deployment>,
    rsInformer as unknown as SharedIndexInformer<ReplicaSet>,
    podInformer as unknown as SharedIndexInformer<Pod>,
    client,
    { ...opts, recorder },
  );
}

/** startDeploymentController: the shared informers, its own client, `--concurrent-deployment-syncs` workers. */
export async function startDeploymentController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("deployment-controller");
  const c = newDeploymentController(
    ctx.informerFactory.informerFor(Resources.deployments),
    ctx.informerFactory.informerFor(Resources.replicaSets),
    ctx.informerFactory.informerFor(Resources.pods),
    client,
    {
      onError: (key, err) =>
        ctx.log(`error syncing deployment ${key}: ${err instanceof Error ? err.message : String(err)}`),
    },
  );
  return { done: c.run(ctx.config.concurrentDeploymentSyncs, ctx.signal) };
}
// #endregion start
