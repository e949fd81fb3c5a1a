/**
 * The node lifecycle controller — notices kubelets that went silent: every `--node-monitor-period`
 * it checks each node's last sign of life (a status write or a Lease renewal); past the grace
 * period it marks the node's conditions Unknown, its pods not Ready, and taints the node
 * `node.kubernetes.io/unreachable:NoExecute` (or `not-ready:NoExecute` when the kubelet itself
 * reports NotReady) — the taint-eviction controller then evicts the pods. When the kubelet comes
 * back, the taint comes off.
 * Mirrors kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go
 * (Controller, NewNodeLifecycleController, Run, monitorNodeHealth, tryUpdateNodeHealth,
 * processTaintBaseEviction, doNoExecuteTaintingPass, markNodeForTainting, markNodeAsReachable,
 * podUpdated, processPod, classifyNodes).
 *
 * Solves:
 * - nobody else can say a node is dead: a dead kubelet writes nothing, so its Node keeps saying
 *   "Ready" forever unless the control plane overrides it;
 * - the Services must drop the node's pods at once (MarkPodsNotReady → the Endpoints controller
 *   moves them to notReadyAddresses), but the pods themselves are only *deleted* after their
 *   tolerations allow (300 s by default, DefaultTolerationSeconds) — a short network blip must
 *   not reschedule a whole node;
 * - mass failure is more likely a partition than a disaster: taints are rate-limited per zone
 *   (`--node-eviction-rate`), slowed in a mostly-dead zone, and stopped when every zone is dead
 *   (zones.ts).
 *
 * Invariants:
 * - the node's Ready condition is written by this controller only when the kubelet is overdue,
 *   and only if the write changes it;
 * - a node carries at most one of the unreachable / not-ready NoExecute taints (they mirror the
 *   Ready condition's Unknown / False); both come off once it is Ready again;
 * - the taint decision reads the Ready condition as it was *before* this pass wrote it, so a
 *   node marked Unknown in one pass is tainted in the next (upstream's order).
 *
 * - every node change also brings the node's NoSchedule condition taints in step
 *   (no-schedule-taints.ts), so the scheduler keeps new pods off it.
 *
 * What upstream does differently (simplified here, honestly):
 * - it also reconciles the deprecated beta OS/arch node labels (reconcileNodeLabels) — not built;
 * - it runs the node passes on 8 workers and retries a failed pass for a node five times from a
 *   fresh GET; we do the same with fewer words, and no metrics.
 *
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go (Controller, NewNodeLifecycleController, Run, monitorNodeHealth, tryUpdateNodeHealth, processTaintBaseEviction, doNoExecuteTaintingPass, markNodeForTainting, markNodeAsReachable, classifyNodes, podUpdated, processPod, UnreachableTaintTemplate, NotReadyTaintTemplate, isNodeExcludedFromDisruptionChecks)
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/node_lifecycle_controller.go (doNodeProcessingPassWorker)
 * @upstream kubernetes/kubernetes pkg/controller/nodelifecycle/scheduler/timed_workers.go (NodeEvictionPeriod, NodeHealthUpdateRetry)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/core.go (newNodeLifecycleControllerDescriptor, startNodeLifecycleController)
 * @chapter 07-kubelet
 */

import type { Lease } from "../../api/coordination.ts";
import type { Node, NodeCondition, Pod, Taint } from "../../api/core.ts";
import type { GroupVersionKind } from "../../api/schema.ts";
import { isNotFound } from "../../client/errors.ts";
import { Resources } from "../../client/informers/factory.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { DeletedFinalStateUnknown } from "../../client/tools/cache/delta-fifo.ts";
import { waitForCacheSyncWithClock } from "../../client/tools/cache/informer-factory.ts";
import { Lister, NamespaceLister } from "../../client/tools/cache/listers.ts";
import type { SharedIndexInformer } from "../../client/tools/cache/shared-informer.ts";
import { splitMetaNamespaceKey } from "../../client/tools/cache/store.ts";
import { type Clock, realClock, sleep } from "../../client/util/clock.ts";
import { parallelizeUntil } from "../../client/util/workqueue/parallelizer.ts";
import { defaultControllerRateLimiter } from "../../client/util/workqueue/rate-limiters.ts";
import {
  newTypedRateLimitingQueueWithConfig,
  type TypedRateLimitingInterface,
} from "../../client/util/workqueue/rate-limiting-queue.ts";
import { runWorkers } from "../../client/util/workqueue/worker.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";
import { newEventRecorder } from "../event-recorder.ts";
import type { EventRecorder } from "../pod-control.ts";
import { noScheduleTaintDiff } from "./no-schedule-taints.ts";
import {
  addPodNodeNameIndexer,
  getPodsAssignedToNode,
  markPodsNotReady,
  metaTime,
  recordNodeStatusChange,
  removeTaintOffNode,
  swapNodeControllerTaint,
  taintExists,
} from "./node-controller-utils.ts";
import {
  conditionsWhenOverdue,
  type GracePeriods,
  getNodeCondition,
  type NodeHealthData,
  nodeHealthVerdict,
} from "./node-health.ts";
import { ZoneTainters } from "./zone-tainters.ts";
import { getZoneKey } from "./zones.ts";

export const UnreachableTaintTemplate: Taint = { key: "node.kubernetes.io/unreachable", effect: "NoExecute" };
export const NotReadyTaintTemplate: Taint = { key: "node.kubernetes.io/not-ready", effect: "NoExecute" };
/** How often the NoExecute taint queue is worked (scheduler.NodeEvictionPeriod). */
export const NodeEvictionPeriodMs = 100;
/** Tries of one node's health update, 20 ms apart (NodeHealthUpdateRetry, retrySleepTime). */
const NodeHealthUpdateRetry = 5;
const retrySleepTimeMs = 20;
/** Workers of the node pass and of the pod queue (nodeUpdateWorkerSize, podUpdateWorkerSize). */
const nodeUpdateWorkerSize = 8;
const podUpdateWorkerSize = 4;
/** Nodes with this label do not count in their zone's health (labelNodeDisruptionExclusion). */
const labelNodeDisruptionExclusion = "node.kubernetes.io/exclude-disruption";
const nodeKind: GroupVersionKind = { group: "", version: "v1", kind: "Node" };
const podKind: GroupVersionKind = { group: "", version: "v1", kind: "Pod" };
const leaseNamespace = "kube-node-lease";

export interface NodeLifecycleControllerOptions extends GracePeriods {
  clock?: Clock;
  nodeMonitorPeriodMs: number;
  evictionLimiterQPS: number;
  secondaryEvictionLimiterQPS: number;
  largeClusterThreshold: number;
  unhealthyZoneThreshold: number;
  /** Events on Nodes (RegisteredNode, NodeNotReady). */
  recorder?: EventRecorder;
  /** Events on Pods (NodeNotReady from MarkPodsNotReady). */
  podRecorder?: EventRecorder;
  log?: (line: string) => void;
  /** The node-health decision; the real nodeHealthVerdict by default (chapter 7's exercise swaps it). */
  nodeHealthVerdict?: typeof nodeHealthVerdict;
}

export class NodeLifecycleController {
  /** What was seen of each node last time (nodeHealthMap). */
  readonly nodeHealthMap = new Map<string, NodeHealthData>();
  /** The per-zone taint queues and zone states (zone-tainters.ts). */
  readonly zones: ZoneTainters;
  private readonly knownNodeSet = new Map<string, Node>();
  /** Nodes whose pods could not all be marked not ready: tried again next pass. */
  private readonly nodesToRetry = new Set<string>();
  readonly podUpdateQueue: TypedRateLimitingInterface<string>;
  /** Nodes whose NoSchedule condition taints may be out of date (nodeUpdateQueue). */
  readonly nodeUpdateQueue: TypedRateLimitingInterface<string>;
  private readonly clock: Clock;
  private readonly recorder: EventRecorder;
  private readonly podRecorder: EventRecorder;
  private readonly log: (line: string) => void;

  constructor(
    private readonly podInformer: SharedIndexInformer<Pod>,
    private readonly nodeInformer: SharedIndexInformer<Node>,
    private readonly leaseInformer: SharedIndexInformer<Lease>,
    private readonly client: Clientset,
    private readonly opts: NodeLifecycleControllerOptions,
  ) {
    this.clock = opts.clock ?? realClock;
    this.recorder = opts.recorder ?? (() => {});
    this.podRecorder = opts.podRecorder ?? (() => {});
    this.log = opts.log ?? (() => {});
    this.zones = new ZoneTainters(this.clock, opts, this.log);
    this.podUpdateQueue = newTypedRateLimitingQueueWithConfig<string>(
      defaultControllerRateLimiter(this.clock),
      {
        name: "node_lifecycle_controller_pods",
        clock: this.clock,
      },
    );
    this.nodeUpdateQueue = newTypedRateLimitingQueueWithConfig<string>(
      defaultControllerRateLimiter(this.clock),
      {
        name: "node_lifecycle_controller",
        clock: this.clock,
      },
    );
    nodeInformer.addEventHandler({
      onAdd: (node) => this.nodeUpdateQueue.add(node.metadata.name ?? ""),
      onUpdate: (_old, node) => this.nodeUpdateQueue.add(node.metadata.name ?? ""),
      onDelete: (obj) => {
        const node = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        if (node) this.nodesToRetry.delete(node.metadata.name ?? "");
      },
    });
    addPodNodeNameIndexer(podInformer);
    // A pod newly assigned to a node: if that node is not Ready, the pod is not either.
    podInformer.addEventHandler({
      onAdd: (pod) => this.podUpdated(undefined, pod),
      onUpdate: (oldPod, pod) => this.podUpdated(oldPod, pod),
    });
  }

  private now(): number {
    return this.clock.now();
  }

  // #region run
  /** The three loops: node health every monitor period, the taint queue every 100 ms, the pod queue. */
  async run(signal: AbortSignal): Promise<void> {
    const synced = await waitForCacheSyncWithClock(
      this.clock,
      signal,
      () => this.podInformer.hasSynced(),
      () => this.nodeInformer.hasSynced(),
      () => this.leaseInformer.hasSynced(),
    );
    if (!synced) {
      this.podUpdateQueue.shutDown();
      this.nodeUpdateQueue.shutDown();
      return;
    }
    await Promise.all([
      runWorkers(
        this.nodeUpdateQueue,
        nodeUpdateWorkerSize,
        (name) => this.doNoScheduleTaintingPass(name),
        signal,
      ),
      runWorkers(this.podUpdateQueue, podUpdateWorkerSize, (key) => this.processPod(key), signal),
      this.until(() => this.doNoExecuteTaintingPass(), NodeEvictionPeriodMs, signal),
      this.until(() => this.monitorNodeHealth(signal), this.opts.nodeMonitorPeriodMs, signal),
    ]);
  }

  /** wait.UntilWithContext: run, wait the period, run again, until the signal aborts. */
  private async until(fn: () => Promise<void>, periodMs: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await fn();
      } catch (err) {
        this.log(
          `E "Error in node lifecycle loop" err="${err instanceof Error ? err.message : String(err)}"`,
        );
      }
      await sleep(this.clock, periodMs, signal);
    }
  }
  // #endregion run

  // #region monitor-node-health
  /** One pass over every node: health, taint decisions, pods not ready, zone states. */
  async monitorNodeHealth(signal?: AbortSignal): Promise<void> {
    const nodes = new Lister(this.nodeInformer.getIndexer()).list();
    const { added, deleted, newZoneRepresentatives } = this.classifyNodes(nodes);
    for (const node of newZoneRepresentatives) this.zones.addPodEvictorForNewZone(node);
    for (const node of added) {
      this.recorder(node, "Normal", "RegisteredNode", `Registered Node ${node.metadata.name} in Controller`);
      this.knownNodeSet.set(node.metadata.name ?? "", node);
      this.zones.addPodEvictorForNewZone(node);
      await this.markNodeAsReachable(node);
    }
    for (const node of deleted) {
      this.recorder(node, "Normal", "RemovingNode", `Removing Node ${node.metadata.name} from Controller`);
      this.knownNodeSet.delete(node.metadata.name ?? "");
    }

    const zoneToNodeConditions = new Map<string, (NodeCondition | undefined)[]>();
    await parallelizeUntil(signal, nodeUpdateWorkerSize, nodes.length, async (piece) => {
      let node = structuredClone(nodes[piece]);
      const name = node.metadata.name ?? "";
      let result: { observed: NodeCondition; current?: NodeCondition } | undefined;
      for (let attempt = 0; attempt < NodeHealthUpdateRetry && !result; attempt++) {
        try {
          result = await this.tryUpdateNodeHealth(node);
        } catch (err) {
          this.log(`E "Error updating node" node="${name}" err="${String(err)}"`);
          await new Promise((r) => setTimeout(r, retrySleepTimeMs));
          try {
            node = await this.client.coreV1.nodes().get(name);
          } catch {
            this.log(
              `E "Failed while getting a Node to retry updating node health. Probably Node was deleted" node="${name}"`,
            );
            return;
          }
        }
      }
      if (!result) {
        this.log(
          `E "Update health of Node from Controller error, Skipping - no pods will be evicted" node="${name}"`,
        );
        return;
      }
      const { observed, current } = result;
      if (node.metadata.labels?.[labelNodeDisruptionExclusion] === undefined) {
        const zone = getZoneKey(node);
        zoneToNodeConditions.set(zone, [...(zoneToNodeConditions.get(zone) ?? []), current]);
      }
      if (current) {
        const pods = getPodsAssignedToNode(this.podInformer, name);
        await this.processTaintBaseEviction(node, observed);
        const needsRetry = this.nodesToRetry.has(name);
        const wentNotReady = current.status !== "True" && observed.status === "True";
        // Report the change once, when it happens.
        if (wentNotReady) recordNodeStatusChange(this.recorder, node, "NodeNotReady");
        if (wentNotReady || (needsRetry && observed.status !== "True")) {
          try {
            await markPodsNotReady(this.client, this.podRecorder, pods, name, this.now());
          } catch (err) {
            this.log(
              `E "unable to mark all pods NotReady on node ${name}: ${String(err)}; queuing for retry"`,
            );
            this.nodesToRetry.add(name);
            return;
          }
        }
      }
      this.nodesToRetry.delete(name);
    });
    switch (this.zones.handleDisruption(zoneToNodeConditions)) {
      case "entered":
        // No evictions in disruption mode: the taints already placed come off too.
        for (const node of nodes) await this.markNodeAsReachable(node);
        break;
      case "exited": {
        // Every node gets a fresh grace period: they could not report while we could not hear.
        const now = this.now();
        for (const node of nodes) {
          const name = node.metadata.name ?? "";
          const h = this.nodeHealthMap.get(name);
          if (h) this.nodeHealthMap.set(name, { ...h, probeTimestamp: now, readyTransitionTimestamp: now });
        }
        break;
      }
    }
  }
  // #endregion monitor-node-health

  // #region try-update-node-health
  /**
   * The verdict of node-health.ts, and if the node is overdue its conditions turned Unknown and
   * written. Returns the Ready condition as posted (observed) and as it is now (current).
   */
  async tryUpdateNodeHealth(node: Node): Promise<{ observed: NodeCondition; current?: NodeCondition }> {
    const name = node.metadata.name ?? "";
    const lease = new NamespaceLister(this.leaseInformer.getIndexer(), leaseNamespace).get(name);
    const renew = lease?.spec?.renewTime ? Date.parse(lease.spec.renewTime) : undefined;
    const now = this.now();
    const verdict = (this.opts.nodeHealthVerdict ?? nodeHealthVerdict)(
      this.nodeHealthMap.get(name),
      node,
      renew,
      now,
      this.opts,
    );
    this.nodeHealthMap.set(name, verdict.health);
    let current = getNodeCondition(node, "Ready");
    if (!verdict.overdue) return { observed: verdict.observedReadyCondition, current };

    const conditions = conditionsWhenOverdue(node, metaTime(now));
    current = conditions.find((c) => c.type === "Ready");
    if (JSON.stringify(current) === JSON.stringify(verdict.observedReadyCondition))
      return { observed: verdict.observedReadyCondition, current };
    this.log(`I "Node hasn't been updated" node="${name}" why="${verdict.why}"`);
    const updated: Node = { ...node, status: { ...node.status, conditions } };
    await this.client.coreV1.nodes().updateStatus(updated);
    this.nodeHealthMap.set(name, {
      ...verdict.health,
      readyCondition: current,
      readyTransitionTimestamp: now,
    });
    return { observed: verdict.observedReadyCondition, current };
  }
  // #endregion try-update-node-health

  // #region taint-decision
  /** processTaintBaseEviction: queue the node for the taint its *posted* Ready condition calls for. */
  private async processTaintBaseEviction(node: Node, observed: NodeCondition): Promise<void> {
    const now = this.now();
    switch (observed.status) {
      case "False":
        // Already unreachable-tainted: swap at once rather than queue behind the rate limit.
        if (taintExists(node.spec?.taints, UnreachableTaintTemplate)) {
          if (
            !(await swapNodeControllerTaint(
              this.client,
              [NotReadyTaintTemplate],
              [UnreachableTaintTemplate],
              node,
              now,
            ))
          )
            this.log(
              `E "Failed to instantly swap UnreachableTaint to NotReadyTaint. Will try again in the next cycle"`,
            );
        } else if (this.markNodeForTainting(node, "False")) {
          this.log(`I "Node is NotReady. Adding it to the Taint queue" node="${node.metadata.name}"`);
        }
        break;
      case "Unknown":
        if (taintExists(node.spec?.taints, NotReadyTaintTemplate)) {
          if (
            !(await swapNodeControllerTaint(
              this.client,
              [UnreachableTaintTemplate],
              [NotReadyTaintTemplate],
              node,
              now,
            ))
          )
            this.log(
              `E "Failed to instantly swap NotReadyTaint to UnreachableTaint. Will try again in the next cycle"`,
            );
        } else if (this.markNodeForTainting(node, "Unknown")) {
          this.log(`I "Node is unresponsive. Adding it to the Taint queue" node="${node.metadata.name}"`);
        }
        break;
      case "True":
        if (await this.markNodeAsReachable(node))
          this.log(`I "Node is healthy again, removed all taints" node="${node.metadata.name}"`);
        break;
    }
  }

  private markNodeForTainting(node: Node, status: "False" | "Unknown"): boolean {
    const q = this.zones.tainterFor(node);
    // The node was tainted once and the taint is gone (removed by hand?): let it queue again.
    const wanted = status === "False" ? NotReadyTaintTemplate : UnreachableTaintTemplate;
    if (!taintExists(node.spec?.taints, wanted)) q.remove(node.metadata.name ?? "");
    return q.add(node.metadata.name ?? "", node.metadata.uid ?? "");
  }

  /** Both NoExecute taints off, and out of the taint queue; true if it was queued. */
  private async markNodeAsReachable(node: Node): Promise<boolean> {
    const name = node.metadata.name ?? "";
    try {
      await removeTaintOffNode(this.client, name, node, [UnreachableTaintTemplate]);
      await removeTaintOffNode(this.client, name, node, [NotReadyTaintTemplate]);
    } catch (err) {
      this.log(
        `E "Failed to remove taints from node. Will retry in next iteration" node="${name}" err="${String(err)}"`,
      );
      return false;
    }
    return this.zones.tainterFor(node).remove(name);
  }
  // #endregion taint-decision

  /** The node's NoSchedule taints, in step with its conditions (doNoScheduleTaintingPass). */
  async doNoScheduleTaintingPass(nodeName: string): Promise<void> {
    const node = new Lister(this.nodeInformer.getIndexer()).get(nodeName);
    if (!node) return;
    const [toAdd, toDel] = noScheduleTaintDiff(node);
    if (toAdd.length === 0 && toDel.length === 0) return;
    if (!(await swapNodeControllerTaint(this.client, toAdd, toDel, node, this.now())))
      throw new Error(`failed to swap taints of node ${nodeName}`);
  }

  // #region no-execute-tainting-pass
  /** Every 100 ms: taint the queued nodes whose zone's rate allows it, as their Ready condition says now. */
  async doNoExecuteTaintingPass(): Promise<void> {
    for (const tainter of this.zones.zoneNoExecuteTainter.values()) {
      await tainter.try(async (v) => {
        const node = new Lister(this.nodeInformer.getIndexer()).get(v.value);
        if (!node) return [true, 0]; // gone
        const ready = getNodeCondition(node, "Ready");
        if (!ready) return [false, 50];
        // unreachable and not-ready mirror Unknown and False, so they exclude each other.
        let add: Taint;
        let opposite: Taint;
        if (ready.status === "False") [add, opposite] = [NotReadyTaintTemplate, UnreachableTaintTemplate];
        else if (ready.status === "Unknown")
          [add, opposite] = [UnreachableTaintTemplate, NotReadyTaintTemplate];
        else return [true, 0]; // Ready again meanwhile: nothing to do
        const ok = await swapNodeControllerTaint(this.client, [add], [opposite], node, this.now(), (err) =>
          this.log(`E "unable to taint unresponsive Node" node="${v.value}" err="${String(err)}"`),
        );
        return [ok, 0];
      });
    }
  }
  // #endregion no-execute-tainting-pass

  private classifyNodes(all: Node[]): { added: Node[]; deleted: Node[]; newZoneRepresentatives: Node[] } {
    const added: Node[] = [];
    const newZoneRepresentatives: Node[] = [];
    for (const n of all) {
      if (!this.knownNodeSet.has(n.metadata.name ?? "")) added.push(n);
      else if (!this.zones.hasZone(n)) newZoneRepresentatives.push(n);
    }
    const names = new Set(all.map((n) => n.metadata.name ?? ""));
    const deleted = [...this.knownNodeSet.entries()].filter(([k]) => !names.has(k)).map(([, n]) => n);
    return { added, deleted, newZoneRepresentatives };
  }

  // #region pods
  private podUpdated(oldPod: Pod | undefined, pod: Pod): void {
    const nodeName = pod.spec.nodeName;
    if (nodeName && (!oldPod || oldPod.spec.nodeName !== nodeName))
      this.podUpdateQueue.add(`${pod.metadata.namespace ?? ""}/${pod.metadata.name ?? ""}`);
  }

  /** A pod just bound to a node the controller knows not to be Ready: mark it not ready too. */
  async processPod(key: string): Promise<void> {
    const { namespace, name } = splitMetaNamespaceKey(key);
    const pod = new NamespaceLister(this.podInformer.getIndexer(), namespace).get(name);
    if (!pod) return;
    const nodeName = pod.spec.nodeName ?? "";
    const health = this.nodeHealthMap.get(nodeName);
    if (!health) return; // not seen yet: the next node pass will handle it
    if (!new Lister(this.nodeInformer.getIndexer()).get(nodeName))
      throw new Error(`node "${nodeName}" not found`);
    const ready = health.readyCondition;
    if (!ready) return;
    if (ready.status !== "True") {
      try {
        await markPodsNotReady(this.client, this.podRecorder, [pod], nodeName, this.now());
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
  // #endregion pods
}

/** startNodeLifecycleController: the flags of NodeLifecycleControllerConfiguration, as `node-controller`. */
export async function startNodeLifecycleController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("node-controller");
  const c = newNodeLifecycleController(ctx, client);
  return { done: c.run(ctx.signal) };
}

/** The controller over the shared informers, configured from the controller-manager's config. */
export function newNodeLifecycleController(
  ctx: Pick<ControllerContext, "informerFactory" | "config" | "log">,
  client: Clientset,
  opts: {
    clock?: Clock;
    recorder?: EventRecorder;
    podRecorder?: EventRecorder;
    /** Chapter 7's exercise: its own node-health decision in place of nodeHealthVerdict. */
    nodeHealthVerdict?: typeof nodeHealthVerdict;
  } = {},
): NodeLifecycleController {
  const cfg = ctx.config;
  return new NodeLifecycleController(
    ctx.informerFactory.informerFor(Resources.pods) as unknown as SharedIndexInformer<Pod>,
    ctx.informerFactory.informerFor(Resources.nodes) as unknown as SharedIndexInformer<Node>,
    ctx.informerFactory.informerFor(Resources.leases) as unknown as SharedIndexInformer<Lease>,
    client,
    {
      clock: opts.clock,
      nodeHealthVerdict: opts.nodeHealthVerdict,
      recorder: opts.recorder ?? newEventRecorder(client, "node-controller", nodeKind, { clock: opts.clock }),
      podRecorder:
        opts.podRecorder ?? newEventRecorder(client, "node-controller", podKind, { clock: opts.clock }),
      log: ctx.log,
      nodeMonitorPeriodMs: cfg.nodeMonitorPeriodMs,
      nodeMonitorGracePeriodMs: cfg.nodeMonitorGracePeriodMs,
      nodeStartupGracePeriodMs: cfg.nodeStartupGracePeriodMs,
      evictionLimiterQPS: cfg.nodeEvictionRate,
      secondaryEvictionLimiterQPS: cfg.secondaryNodeEvictionRate,
      largeClusterThreshold: cfg.largeClusterSizeThreshold,
      unhealthyZoneThreshold: cfg.unhealthyZoneThreshold,
    },
  );
}
