/**
 * The taint-eviction controller — deletes the pods of a node tainted NoExecute: at once if they
 * do not tolerate the taint, after `tolerationSeconds` if they tolerate it for a while, never if
 * they tolerate it forever. A taint removed in time cancels the pending deletions.
 * Mirrors kubernetes/kubernetes pkg/controller/tainteviction/taint_eviction.go (Controller, New,
 * Run, PodUpdated, NodeUpdated, handlePodUpdate, handleNodeUpdate, processPodOnNode,
 * deletePodHandler, addConditionAndDeletePod, getMinTolerationTime, the TaintManagerEviction events).
 *
 * Solves:
 * - the node lifecycle controller only *taints* a silent node; this controller turns the taint
 *   into evictions, so anyone can evict a node's pods the same way (`kubectl taint node n1
 *   maintenance=x:NoExecute`);
 * - every pod chooses how long it waits out a dead node: DefaultTolerationSeconds (chapter 3)
 *   gives each pod 300 s for `not-ready` and `unreachable`, a DaemonSet's pods stay forever;
 * - the pod learns *why* it was deleted: before the delete it gets the condition
 *   DisruptionTarget=True, reason DeletionByTaintManager (a Job's pod failure policy reads it).
 *
 * Invariants:
 * - one timer per pod; its deadline is fixed when the first tolerated NoExecute taint is seen
 *   (createdAt + the smallest tolerationSeconds of the tolerations used): later taint changes do
 *   not restart it — upstream keeps the existing timer unless it would fire *later* than a new one
 *   started now, which never happens for a timer already running;
 * - all NoExecute taints gone → every pending deletion of the node's pods is cancelled, with a
 *   "Cancelling deletion of Pod" event; a pod deleted by someone else cancels its own;
 * - node events are handled before pod events where both are waiting (upstream's priority).
 *
 * What upstream does differently: it shards node and pod updates over 8 workers by a hash of
 * the node name so that one node's pods are handled in order; we run one worker per queue —
 * the same order with less parallelism.
 *
 * @upstream kubernetes/kubernetes pkg/controller/tainteviction/taint_eviction.go (Controller, New, Run, PodUpdated, NodeUpdated, cancelWorkWithEvent, processPodOnNode, handlePodUpdate, handleNodeUpdate, emitPodDeletionEvent, emitCancelPodDeletionEvent, deletePodHandler, addConditionAndDeletePod, getNoExecuteTaints, getMinTolerationTime)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/helper/helpers.go (GetMatchingTolerations)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/core.go (newTaintEvictionControllerDescriptor, startTaintEvictionController: "taint-manager uses existing cluster role from node-controller")
 * @chapter 07-kubelet
 */
import type { Node, Pod, Taint, Toleration } from "../../api/core.ts";
import type { GroupVersionKind } from "../../api/schema.ts";
import { isNotFound } from "../../client/errors.ts";
import { Resources } from "../../client/informers/factory.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../../client/rest/request.ts";
import { DeletedFinalStateUnknown } from "../../client/tools/cache/delta-fifo.ts";
import { waitForCacheSyncWithClock } from "../../client/tools/cache/informer-factory.ts";
import { Lister, NamespaceLister } from "../../client/tools/cache/listers.ts";
import type { SharedIndexInformer } from "../../client/tools/cache/shared-informer.ts";
import { splitMetaNamespaceKey } from "../../client/tools/cache/store.ts";
import { type Clock, realClock } from "../../client/util/clock.ts";
import { defaultControllerRateLimiter } from "../../client/util/workqueue/rate-limiters.ts";
import { newTypedRateLimitingQueueWithConfig } from "../../client/util/workqueue/rate-limiting-queue.ts";
import { runWorkers } from "../../client/util/workqueue/worker.ts";
import { toleratesTaint } from "../../scheduler/plugins/helper/taints.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";
import { newEventRecorder } from "../event-recorder.ts";
import {
  addPodNodeNameIndexer,
  getPodsAssignedToNode,
  metaTime,
} from "../nodelifecycle/node-controller-utils.ts";
import type { EventRecorder } from "../pod-control.ts";
import { TimedWorkerQueue } from "./timed-workers.ts";

/** Tries of one deletion, 10 ms apart (retries). */
const retries = 5;
const podKind: GroupVersionKind = { group: "", version: "v1", kind: "Pod" };

export const getNoExecuteTaints = (taints: readonly Taint[] | undefined): Taint[] =>
  (taints ?? []).filter((t) => t.effect === "NoExecute");

// #region tolerations
/** [every taint tolerated, the first toleration matching each taint] (GetMatchingTolerations). */
export function getMatchingTolerations(
  taints: readonly Taint[],
  tolerations: readonly Toleration[] | undefined,
): [boolean, Toleration[]] {
  if (taints.length === 0) return [true, []];
  const used: Toleration[] = [];
  for (const taint of taints) {
    const t = (tolerations ?? []).find((x) => toleratesTaint(x, taint));
    if (!t) return [false, []];
    used.push(t);
  }
  return [true, used];
}

/** The smallest tolerationSeconds in ms; -1 when none is set (tolerated forever); 0 for none or ≤ 0. */
export function getMinTolerationTime(tolerations: readonly Toleration[]): number {
  if (tolerations.length === 0) return 0;
  let min = Number.POSITIVE_INFINITY;
  for (const t of tolerations) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    if (t.tolerationSeconds <= 0) return 0;
    min = Math.min(min, t.tolerationSeconds);
  }
  return min === Number.POSITIVE_INFINITY ? -1 : min * 1000;
}
// #endregion tolerations

export interface TaintEvictionControllerOptions {
  clock?: Clock;
  recorder?: EventRecorder;
  log?: (line: string) => void;
}

export class TaintEvictionController {
  readonly taintEvictionQueue: TimedWorkerQueue;
  /** nodeName → its NoExecute taints, for nodes that have some (taintedNodes). */
  readonly taintedNodes = new Map<string, Taint[]>();
  private readonly nodeUpdateQueue;
  private readonly podUpdateQueue;
  private readonly clock: Clock;
  private readonly recorder: EventRecorder;
  private readonly log: (line: string) => void;

  constructor(
    private readonly podInformer: SharedIndexInformer<Pod>,
    private readonly nodeInformer: SharedIndexInformer<Node>,
    private readonly client: Clientset,
    opts: TaintEvictionControllerOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.recorder = opts.recorder ?? (() => {});
    this.log = opts.log ?? (() => {});
    this.taintEvictionQueue = new TimedWorkerQueue(
      this.clock,
      (key, fireAt) => this.deletePod(key, fireAt),
      (key, err) =>
        this.log(`E "TaintEvictionController: timed worker failed" pod="${key}" err="${String(err)}"`),
    );
    this.nodeUpdateQueue = newTypedRateLimitingQueueWithConfig<string>(
      defaultControllerRateLimiter(this.clock),
      {
        name: "noexec_taint_node",
        clock: this.clock,
      },
    );
    this.podUpdateQueue = newTypedRateLimitingQueueWithConfig<string>(
      defaultControllerRateLimiter(this.clock),
      {
        name: "noexec_taint_pod",
        clock: this.clock,
      },
    );
    addPodNodeNameIndexer(podInformer);
    // #region handlers
    podInformer.addEventHandler({
      onAdd: (pod) => this.podUpdated(undefined, pod),
      onUpdate: (oldPod, pod) => this.podUpdated(oldPod, pod),
      onDelete: (obj) => {
        const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (pod) this.podUpdated(pod, undefined);
      },
    });
    nodeInformer.addEventHandler({
      onAdd: (node) => this.nodeUpdated(undefined, node),
      onUpdate: (oldNode, node) => this.nodeUpdated(oldNode, node),
      onDelete: (obj) => {
        const node = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (node) this.nodeUpdated(node, undefined);
      },
    });
    // #endregion handlers
  }

  private now(): number {
    return this.clock.now();
  }

  async run(signal: AbortSignal): Promise<void> {
    const synced = await waitForCacheSyncWithClock(
      this.clock,
      signal,
      () => this.podInformer.hasSynced(),
      () => this.nodeInformer.hasSynced(),
    );
    if (!synced) {
      this.nodeUpdateQueue.shutDown();
      this.podUpdateQueue.shutDown();
      return;
    }
    await Promise.all([
      runWorkers(this.nodeUpdateQueue, 1, (name) => this.handleNodeUpdate(name), signal),
      // Node updates first: a pod update waits while node updates are queued.
      runWorkers(
        this.podUpdateQueue,
        1,
        async (key) => {
          while (this.nodeUpdateQueue.len() > 0 && !signal.aborted) await new Promise((r) => setImmediate(r));
          this.handlePodUpdate(key);
        },
        signal,
      ),
    ]);
    await this.taintEvictionQueue.cancelAndWait();
  }

  /** A pod's tolerations or node changed (or it came or went): look at it again. */
  private podUpdated(oldPod: Pod | undefined, pod: Pod | undefined): void {
    if (
      oldPod &&
      pod &&
      oldPod.spec.nodeName === pod.spec.nodeName &&
      JSON.stringify(oldPod.spec.tolerations ?? []) === JSON.stringify(pod.spec.tolerations ?? [])
    )
      return;
    const p = (pod ?? oldPod)!;
    this.podUpdateQueue.add(`${p.metadata.namespace ?? ""}/${p.metadata.name ?? ""}`);
  }

  /** A node's NoExecute taints changed (or it came or went). */
  private nodeUpdated(oldNode: Node | undefined, node: Node | undefined): void {
    if (
      oldNode &&
      node &&
      JSON.stringify(getNoExecuteTaints(oldNode.spec?.taints)) ===
        JSON.stringify(getNoExecuteTaints(node.spec?.taints))
    )
      return;
    this.nodeUpdateQueue.add((node ?? oldNode)!.metadata.name ?? "");
  }

  private cancelWorkWithEvent(key: string): void {
    if (this.taintEvictionQueue.cancelWork(key)) {
      const { namespace, name } = splitMetaNamespaceKey(key);
      this.recorder(
        { metadata: { namespace, name } },
        "Normal",
        "TaintManagerEviction",
        `Cancelling deletion of Pod ${key}`,
      );
    }
  }

  // #region taint-eviction-timer
  /** Schedules, keeps, or cancels the deletion of one pod given its node's NoExecute taints. */
  processPodOnNode(
    key: string,
    nodeName: string,
    tolerations: Toleration[] | undefined,
    taints: Taint[],
    now: number,
  ): void {
    if (taints.length === 0) {
      this.cancelWorkWithEvent(key);
      return;
    }
    const [allTolerated, used] = getMatchingTolerations(taints, tolerations);
    if (!allTolerated) {
      this.log(
        `I "Not all taints are tolerated after update for pod on node" pod="${key}" node="${nodeName}"`,
      );
      // Deleted right away: whatever was scheduled is moot.
      this.cancelWorkWithEvent(key);
      this.taintEvictionQueue.addWork(key, now, now);
      return;
    }
    const minTolerationTime = getMinTolerationTime(used);
    if (minTolerationTime < 0) {
      // Tolerated forever.
      this.cancelWorkWithEvent(key);
      return;
    }
    let startTime = now;
    const triggerTime = startTime + minTolerationTime;
    const scheduled = this.taintEvictionQueue.getWorkerUnsafe(key);
    if (scheduled) {
      startTime = scheduled.createdAt;
      // The timer already running fires no later than a new one would: keep it.
      if (startTime + minTolerationTime < triggerTime) return;
      this.cancelWorkWithEvent(key);
    }
    this.taintEvictionQueue.addWork(key, startTime, triggerTime);
  }
  // #endregion taint-eviction-timer

  handlePodUpdate(key: string): void {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pod = new NamespaceLister(this.podInformer.getIndexer(), namespace).get(name);
    if (!pod) {
      this.cancelWorkWithEvent(key); // deleted: nothing left to evict
      return;
    }
    const nodeName = pod.spec.nodeName;
    if (!nodeName) return;
    // Not tainted (or no longer): whatever the node update did already applies.
    const taints = this.taintedNodes.get(nodeName);
    if (!taints) return;
    this.processPodOnNode(key, nodeName, pod.spec.tolerations, taints, this.now());
  }

  handleNodeUpdate(nodeName: string): void {
    const node = new Lister(this.nodeInformer.getIndexer()).get(nodeName);
    if (!node) {
      this.taintedNodes.delete(nodeName);
      return;
    }
    const taints = getNoExecuteTaints(node.spec?.taints);
    // Recorded before the pods are listed: a pod arriving later sees these taints (handlePodUpdate).
    if (taints.length === 0) this.taintedNodes.delete(nodeName);
    else this.taintedNodes.set(nodeName, taints);
    const pods = getPodsAssignedToNode(this.podInformer, nodeName);
    if (pods.length === 0) return;
    const key = (p: Pod) => `${p.metadata.namespace ?? ""}/${p.metadata.name ?? ""}`;
    if (taints.length === 0) {
      for (const p of pods) this.cancelWorkWithEvent(key(p));
      return;
    }
    const now = this.now();
    for (const p of pods) this.processPodOnNode(key(p), nodeName, p.spec.tolerations, taints, now);
  }

  // #region delete-pod
  /** The timer fired: event, DisruptionTarget condition, delete — tried up to 5 times. */
  private async deletePod(key: string, _fireAt: number): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    this.log(`I "Deleting pod" controller="taint-eviction-controller" pod="${key}"`);
    this.recorder(
      { metadata: { namespace, name } },
      "Normal",
      "TaintManagerEviction",
      `Marking for deletion Pod ${key}`,
    );
    let lastErr: unknown;
    for (let i = 0; i < retries; i++) {
      try {
        await this.addConditionAndDeletePod(namespace, name);
        return;
      } catch (err) {
        lastErr = err;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    throw lastErr;
  }

  private async addConditionAndDeletePod(namespace: string, name: string): Promise<void> {
    const pods = this.client.coreV1.pods(namespace);
    const pod = await pods.get(name);
    const existing = pod.status?.conditions?.find((c) => c.type === "DisruptionTarget");
    const condition = {
      type: "DisruptionTarget",
      status: "True" as const,
      reason: "DeletionByTaintManager",
      message: "Taint manager: deleting due to NoExecute taint",
    };
    const changed =
      !existing ||
      existing.status !== condition.status ||
      existing.reason !== condition.reason ||
      existing.message !== condition.message;
    if (changed) {
      const lastTransitionTime =
        existing?.status === condition.status ? existing.lastTransitionTime : metaTime(this.now());
      // A patch of pods/status pinned to this pod's UID (PatchPodStatus): a same-named successor is left alone.
      await pods.patch(
        name,
        StrategicMergePatchType,
        {
          metadata: { uid: pod.metadata.uid },
          status: { conditions: [{ ...condition, lastTransitionTime }] },
        },
        {},
        "status",
      );
    }
    try {
      await pods.delete(name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  // #endregion delete-pod
}

/** startTaintEvictionController: runs as the node-controller account, as upstream does. */
export async function startTaintEvictionController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("node-controller");
  const c = newTaintEvictionController(ctx, client);
  return { done: c.run(ctx.signal) };
}

export function newTaintEvictionController(
  ctx: Pick<ControllerContext, "informerFactory" | "log">,
  client: Clientset,
  opts: TaintEvictionControllerOptions = {},
): TaintEvictionController {
  return new TaintEvictionController(
    ctx.informerFactory.informerFor(Resources.pods) as unknown as SharedIndexInformer<Pod>,
    ctx.informerFactory.informerFor(Resources.nodes) as unknown as SharedIndexInformer<Node>,
    client,
    {
      log: ctx.log,
      ...opts,
      recorder:
        opts.recorder ??
        newEventRecorder(client, "taint-eviction-controller", podKind, { clock: opts.clock }),
    },
  );
}
