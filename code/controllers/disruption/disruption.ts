/**
 * The disruption controller — keeps every PodDisruptionBudget's status true: how many pods it
 * expects, how many are healthy, how many must stay healthy, and so how many may be disrupted now.
 * Upstream: pkg/controller/disruption/disruption.go (DisruptionController).
 *
 * Solves:
 * - evicters (kubectl drain, the scheduler's preemption) need one number, `disruptionsAllowed`,
 *   kept current as pods come, go and turn Ready: every pod event re-syncs the budget that
 *   selects the pod;
 * - a budget whose count cannot be computed must not say "go ahead": on a failed sync the
 *   controller writes disruptionsAllowed 0 with DisruptionAllowed=False, reason SyncFailed
 *   (failSafe) — a conflict only retries, it is not a failure;
 * - the status is written through `/status` and only when something changed, so a resync of
 *   a thousand quiet budgets writes nothing.
 *
 * Invariants:
 * - status.observedGeneration is the generation the counts were computed from;
 * - one key per budget (`namespace/name`) on a rate-limited queue; an eviction still in flight
 *   re-queues the budget for when it expires (two minutes after the eviction);
 * - a pod matched by several budgets re-syncs the first one (upstream warns and picks one too);
 *   budgets with an empty selector are never found from a pod, though they count every pod.
 *
 * @upstream kubernetes/kubernetes pkg/controller/disruption/disruption.go (DisruptionController, NewDisruptionController, Run, addDb, updateDb, removeDb, addPod, updatePod, deletePod, getPdbForPod, getPodsForPdb, sync, trySync, failSafe, updatePdbStatus)
 * @upstream kubernetes/kubernetes pkg/controller/disruption/disruption.go (the stale-DisruptionTarget queue: not built here)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/listers/policy/v1/poddisruptionbudget_expansion.go (GetPodPodDisruptionBudgets)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/policy.go (newDisruptionControllerDescriptor, startDisruptionController)
 * @chapter 05-scheduler
 */
import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import { isEmptySelector, labelSelectorAsSelector, selectorMatches } from "../../api/labels.ts";
import {
  DisruptionAllowedCondition,
  type PodDisruptionBudget,
  type PodDisruptionBudgetStatus,
  SyncFailedReason,
} from "../../api/policy.ts";
import type { GroupVersionResource } from "../../api/schema.ts";
import { isConflict } from "../../client/errors.ts";
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
import { newEventRecorder } from "../event-recorder.ts";
import type { EventRecorder } from "../pod-control.ts";
import {
  buildDisruptedPodMap,
  type ControllerListers,
  conditionsAreUpToDate,
  countHealthyPods,
  getExpectedPodCount,
  setStatusCondition,
  updateDisruptionAllowedCondition,
} from "./expected-pods.ts";

/** policy/v1 poddisruptionbudgets, as the informers and the status writes name them. */
export const podDisruptionBudgets: GroupVersionResource = {
  group: "policy",
  version: "v1",
  resource: "poddisruptionbudgets",
};

export interface DisruptionControllerOptions {
  clock?: Clock;
  /** NoPods, CalculateExpectedPodCountFailed, UnmanagedPods on the budget. */
  recorder?: EventRecorder;
  onError?: (key: string, err: unknown) => void;
}

/** metav1.Time as JSON: seconds, UTC. */
const timeString = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

export class DisruptionController {
  readonly queue: TypedRateLimitingInterface<string>;
  private readonly clock: Clock;
  private readonly recorder: EventRecorder;
  private readonly listers: ControllerListers;

  constructor(
    private readonly podInformer: SharedIndexInformer<Pod>,
    private readonly pdbInformer: SharedIndexInformer<PodDisruptionBudget>,
    private readonly rsInformer: SharedIndexInformer<ReplicaSet>,
    private readonly dInformer: SharedIndexInformer<Deployment>,
    private readonly client: Clientset,
    private readonly opts: DisruptionControllerOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.recorder = opts.recorder ?? (() => {});
    this.queue = newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(this.clock), {
      name: "disruption",
      clock: this.clock,
    });
    this.listers = {
      replicaSet: (ns, name) => new NamespaceLister(rsInformer.getIndexer(), ns).get(name),
      deployment: (ns, name) => new NamespaceLister(dInformer.getIndexer(), ns).get(name),
    };
    // #region handlers
    pdbInformer.addEventHandler({
      onAdd: (pdb) => this.enqueuePdb(pdb),
      onUpdate: (_old, cur) => this.enqueuePdb(cur),
      onDelete: (obj) => {
        const pdb = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (pdb) this.enqueuePdb(pdb);
      },
    });
    podInformer.addEventHandler({
      onAdd: (pod) => this.enqueuePdbOf(pod),
      onUpdate: (oldPod, curPod) => {
        this.enqueuePdbOf(curPod);
        // Relabelled: the budget that selected it before must recount too.
        if (JSON.stringify(oldPod.metadata.labels ?? {}) !== JSON.stringify(curPod.metadata.labels ?? {})) {
          this.enqueuePdbOf(oldPod);
        }
      },
      onDelete: (obj) => {
        const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (pod) this.enqueuePdbOf(pod);
      },
    });
    // #endregion handlers
  }

  /** Waits for the four caches, then runs `workers` workers until `signal` aborts. */
  async run(workers: number, signal: AbortSignal): Promise<void> {
    const synced = await waitForCacheSyncWithClock(
      this.clock,
      signal,
      () => this.podInformer.hasSynced(),
      () => this.pdbInformer.hasSynced(),
      () => this.rsInformer.hasSynced(),
      () => this.dInformer.hasSynced(),
    );
    if (!synced) {
      this.queue.shutDown();
      return;
    }
    await runWorkers(this.queue, workers, (key) => this.sync(key), signal, {
      onError: (key, err) => this.opts.onError?.(key, err),
    });
  }

  private enqueuePdb(pdb: PodDisruptionBudget): void {
    this.queue.add(metaNamespaceKeyFunc(pdb));
  }

  private enqueuePdbOf(pod: Pod): void {
    const pdb = this.getPdbForPod(pod);
    if (pdb) this.enqueuePdb(pdb);
  }

  /** GetPodPodDisruptionBudgets' first answer: budgets with a non-empty selector matching the pod. */
  getPdbForPod(pod: Pod): PodDisruptionBudget | undefined {
    const ns = pod.metadata.namespace ?? "";
    const matching = new NamespaceLister(this.pdbInformer.getIndexer(), ns).list().filter((pdb) => {
      const sel = labelSelectorAsSelector(pdb.spec?.selector);
      // A nil or empty selector must match nothing here, not everything.
      return sel.ok && !isEmptySelector(sel.value) && selectorMatches(sel.value, pod.metadata.labels ?? {});
    });
    return matching[0];
  }

  /** getPodsForPdb: the pods of the budget's namespace its selector matches (empty: all, absent: none). */
  private podsForPdb(pdb: PodDisruptionBudget): Pod[] {
    const sel = labelSelectorAsSelector(pdb.spec?.selector);
    if (!sel.ok) throw sel.error;
    return new NamespaceLister(this.podInformer.getIndexer(), pdb.metadata.namespace ?? "").list(sel.value);
  }

  // #region sync
  async sync(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pdb = new NamespaceLister(this.pdbInformer.getIndexer(), namespace).get(name);
    if (!pdb) return; // deleted: nothing to keep true
    try {
      await this.trySync(pdb);
    } catch (err) {
      // A conflict means our copy is stale: retry with the informer's newer one, no fail-safe.
      if (isConflict(err)) throw err;
      await this.failSafe(pdb, err instanceof Error ? err.message : String(err));
      throw err;
    }
  }

  private async trySync(pdb: PodDisruptionBudget): Promise<void> {
    const pods = this.podsForPdb(pdb);
    if (pods.length === 0) this.recorder(pdb, "Normal", "NoPods", "No matching pods found");
    let counts: ReturnType<typeof getExpectedPodCount>;
    try {
      counts = getExpectedPodCount(pdb, pods, this.listers);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.recorder(
        pdb,
        "Warning",
        "CalculateExpectedPodCountFailed",
        `Failed to calculate the number of expected pods: ${message}`,
      );
      throw err;
    }
    if (counts.unmanagedPods.length > 0) {
      this.recorder(
        pdb,
        "Warning",
        "UnmanagedPods",
        `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(pdb.spec?.selector)}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    const now = this.clock.now();
    const { disruptedPods, recheckMs } = buildDisruptedPodMap(pods, pdb, now);
    const currentHealthy = countHealthyPods(pods, disruptedPods, now);
    await this.updatePdbStatus(
      pdb,
      currentHealthy,
      counts.desiredHealthy,
      counts.expectedCount,
      disruptedPods,
    );
    if (recheckMs !== undefined) this.queue.addAfter(metaNamespaceKeyFunc(pdb), recheckMs - now);
  }
  // #endregion sync

  // #region update-status
  /** updatePdbStatus: the new counts, written only when they (or the condition) changed. */
  private async updatePdbStatus(
    pdb: PodDisruptionBudget,
    currentHealthy: number,
    desiredHealthy: number,
    expectedPods: number,
    disruptedPods: Record<string, string>,
  ): Promise<void> {
    // expectedPods 0: a budget whose first pods appear before its next sync stays safe.
    let disruptionsAllowed = currentHealthy - desiredHealthy;
    if (expectedPods <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
    const s = pdb.status;
    const generation = pdb.metadata.generation ?? 0;
    if (
      s &&
      s.currentHealthy === currentHealthy &&
      s.desiredHealthy === desiredHealthy &&
      s.expectedPods === expectedPods &&
      s.disruptionsAllowed === disruptionsAllowed &&
      sameDisruptedPods(s.disruptedPods, disruptedPods) &&
      (s.observedGeneration ?? 0) === generation &&
      conditionsAreUpToDate(pdb)
    ) {
      return;
    }
    const status: PodDisruptionBudgetStatus = {
      observedGeneration: generation,
      ...(Object.keys(disruptedPods).length > 0 ? { disruptedPods } : {}),
      disruptionsAllowed,
      currentHealthy,
      desiredHealthy,
      expectedPods,
      conditions: structuredClone(s?.conditions ?? []),
    };
    const updated: PodDisruptionBudget = { ...structuredClone(pdb), status };
    updateDisruptionAllowedCondition(updated, timeString(this.clock.now()));
    await this.writeStatus(updated);
  }

  /** failSafe: nothing may be disrupted while the budget cannot be computed; the error says why. */
  private async failSafe(pdb: PodDisruptionBudget, message: string): Promise<void> {
    const updated = structuredClone(pdb);
    const status: PodDisruptionBudgetStatus = updated.status ?? {
      disruptionsAllowed: 0,
      currentHealthy: 0,
      desiredHealthy: 0,
      expectedPods: 0,
    };
    status.disruptionsAllowed = 0;
    status.conditions ??= [];
    setStatusCondition(
      status.conditions,
      {
        type: DisruptionAllowedCondition,
        status: "False",
        reason: SyncFailedReason,
        message,
        observedGeneration: status.observedGeneration,
      },
      timeString(this.clock.now()),
    );
    updated.status = status;
    await this.writeStatus(updated);
  }

  private async writeStatus(pdb: PodDisruptionBudget): Promise<void> {
    await this.client
      .resource<PodDisruptionBudget>(podDisruptionBudgets, pdb.metadata.namespace)
      .updateStatus(pdb);
  }
  // #endregion update-status
}

/** Semantic equality of two disrupted-pod maps (absent and empty are equal). */
function sameDisruptedPods(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => a?.[k] === b[k]);
}

// #region start
/**
 * The controller-manager's start function (upstream's cmd/kube-controller-manager/app/policy.go,
 * startDisruptionController): the shared pod, budget, ReplicaSet and Deployment informers, the
 * controller's own client, one worker (upstream runs a single worker too).
 */
export async function startDisruptionController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("disruption-controller");
  const recorder = newEventRecorder(client, "controllermanager", {
    group: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
  });
  const c = new DisruptionController(
    ctx.informerFactory.informerFor(Resources.pods) as unknown as SharedIndexInformer<Pod>,
    ctx.informerFactory.informerFor(
      podDisruptionBudgets,
    ) as unknown as SharedIndexInformer<PodDisruptionBudget>,
    ctx.informerFactory.informerFor(Resources.replicaSets) as unknown as SharedIndexInformer<ReplicaSet>,
    ctx.informerFactory.informerFor(Resources.deployments) as unknown as SharedIndexInformer<Deployment>,
    client,
    {
      recorder,
      onError: (key, err) =>
        ctx.log(
          `error syncing PodDisruptionBudget ${key}: ${err instanceof Error ? err.message : String(err)}`,
        ),
    },
  );
  return {
    done: c.run(1, ctx.signal).finally(() => recorder.flush()),
  };
}
// #endregion start
