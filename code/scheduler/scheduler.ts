/**
 * New and Run — the scheduler assembled: informers, cache, snapshot, queue and one Framework per
 * profile, wired to the API server (bind through `pods/binding`, status through `pods/status`,
 * events), then the scheduling loop until stopped.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/scheduler.go (Scheduler, New, Run, NewInformerFactory, schedulerOptions, defaultSchedulerOptions, buildQueueingHintMap)
 * @upstream kubernetes/kubernetes pkg/scheduler/schedule_one.go (updatePod)
 * @upstream kubernetes/kubernetes pkg/scheduler/util/utils.go (PatchPodStatus)
 * @upstream kubernetes/kubernetes pkg/api/v1/pod/util.go (UpdatePodCondition)
 * @chapter 05-scheduler
 *
 * Solves: the pieces (queue, cache, frameworks, schedule-one) are pure and tested alone; a
 * scheduler needs them built in the right order from one configuration and connected to the
 * cluster — and a clean stop that leaves no binding half done.
 *
 * Invariants:
 * - the first cycle starts only after the pods and nodes informers have synced and their
 *   handlers have seen the initial list: a pod is never placed on a partial picture.
 * - the pods informer lists only non-terminal pods (`status.phase!=Succeeded,status.phase!=Failed`):
 *   a finished pod holds no room and will never be scheduled.
 * - every profile shares the one queue, cache and snapshot; the queue orders with the first
 *   profile's QueueSort (upstream validation requires them all equal).
 * - `stop` closes the queue (the loop ends after the current cycle), waits for the bindings in
 *   flight, then stops the informers and the cache's cleanup.
 */

import type { Binding, Node, Pod, PodCondition } from "../api/core.ts";
import { Resources } from "../client/informers/factory.ts";
import type { Clientset } from "../client/kubernetes/clientset.ts";
import { MergePatchType, StrategicMergePatchType } from "../client/rest/request.ts";
import { SharedInformerFactory, waitForCacheSync } from "../client/tools/cache/informer-factory.ts";
import { newFilteredListWatchFromClient } from "../client/tools/cache/listwatch.ts";
import type { SharedIndexInformer } from "../client/tools/cache/shared-informer.ts";
import { type Clock, realClock } from "../client/util/clock.ts";
import { type CorrelatingEventRecorder, newEventRecorder } from "../controllers/event-recorder.ts";
import type { ComponentTracerProvider } from "../tracing/provider.ts";
import { Cache } from "./backend/cache/cache.ts";
import { Snapshot } from "./backend/cache/snapshot.ts";
import { buildQueueingHintMap } from "./backend/queue/queueing-hint-map.ts";
import { PriorityQueue } from "./backend/queue/scheduling-queue.ts";
import { addAllEventHandlers } from "./eventhandlers.ts";
import { type NominatingInfo, NominatingMode, type PreEnqueuePlugin } from "./framework/interface.ts";
import type { PodDisruptionBudget } from "./framework/preemption/preemption.ts"; // chapter 5: PDBs
import type { Framework, FrameworkOptions } from "./framework/runtime/framework.ts";
import type { ProfileConfig, Registry } from "./framework/runtime/registry.ts";
import { SchedulerMetrics } from "./metrics/metrics.ts";
import { DefaultSchedulerName, defaultProfile, newInTreeRegistry } from "./plugins/registry.ts";
import { newMap } from "./profile/profile.ts";
import { type PodScheduledCondition, Scheduler } from "./schedule-one.ts";

// #region options
/** The part of KubeSchedulerConfiguration (apis/config/types.ts) New reads; the whole one fits. */
export interface SchedulerConfiguration {
  profiles: ProfileConfig[];
  /** 0: adaptive (50% minus 1% per 125 nodes, at least 5%). */
  percentageOfNodesToScore: number;
  podInitialBackoffSeconds: number;
  podMaxBackoffSeconds: number;
}

/** defaultSchedulerOptions: upstream's numbers, and the default profile. */
export const defaultSchedulerConfiguration = (): SchedulerConfiguration => ({
  profiles: [defaultProfile()],
  percentageOfNodesToScore: 0,
  podInitialBackoffSeconds: 1,
  podMaxBackoffSeconds: 10,
});

export interface NewSchedulerOptions {
  client: Clientset;
  /**
   * The clientset Events are written through (default: `client`). kube-scheduler gives them one
   * of their own (upstream's createClients: `client` and `eventClient`), so events and bindings
   * do not share one QPS budget.
   */
  eventClient?: Clientset;
  /**
   * chapter 5: false when the API server does not serve policy/v1 poddisruptionbudgets
   * (preemption then sees no budgets); default true, as upstream always lists them.
   */
  servesPodDisruptionBudgets?: boolean;
  /** Default: newSchedulerInformerFactory(client). */
  informerFactory?: SharedInformerFactory;
  config?: Partial<SchedulerConfiguration>;
  /** Out-of-tree plugins, added to the in-tree registry (WithFrameworkOutOfTreeRegistry). */
  outOfTreeRegistry?: Registry;
  clock?: Clock;
  log?: (line: string) => void;
  onError?: (err: Error) => void;
  /** Record every decision on the pod as kube-scheduler-simulator's annotations (--explain). */
  explain?: boolean;
  /** chapter 8: tracing (a course addition; upstream 1.32's scheduler has none). */
  tracerProvider?: ComponentTracerProvider;
}
// #endregion options

/** chapter 5: the PDBs DefaultPreemption honours (policy/v1). */
export const podDisruptionBudgets = {
  group: "policy",
  version: "v1",
  resource: "poddisruptionbudgets",
} as const;

// #region informer-factory
/** The pods informer's field selector: pods that still need (or hold) room. */
export const nonTerminalPodsSelector = "status.phase!=Succeeded,status.phase!=Failed";

/**
 * NewInformerFactory: the client's informers, except that pods are listed and watched with
 * the non-terminal selector (upstream replaces the factory's pod informer with its own).
 */
export function newSchedulerInformerFactory(client: Clientset, resyncMs = 0): SharedInformerFactory {
  return new SharedInformerFactory(
    (gvr, namespace, tweak) =>
      newFilteredListWatchFromClient(client.restClientFor(gvr), gvr.resource, namespace, (o) => {
        const copy = { ...o };
        tweak?.(copy);
        if (gvr.group === "" && gvr.resource === "pods") {
          copy.fieldSelector = copy.fieldSelector
            ? `${copy.fieldSelector},${nonTerminalPodsSelector}`
            : nonTerminalPodsSelector;
        }
        return copy;
      }),
    resyncMs,
  );
}
// #endregion informer-factory

// #region api-writes
/** DefaultBinder's write: POST pods/<name>/binding with the target node. */
export function bindViaAPI(client: Clientset) {
  return async (pod: Pod, nodeName: string): Promise<void> => {
    const binding: Binding = {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid },
      target: { kind: "Node", name: nodeName },
    };
    await client.coreV1.pods(pod.metadata.namespace ?? "default").bind(binding);
  };
}

/**
 * updatePod: set the pod's PodScheduled condition (and, when overriding, its nominatedNodeName)
 * with a strategic merge patch of `pods/status` — nothing is sent when nothing would change.
 */
export function updatePodViaAPI(client: Clientset, clock: Clock = realClock) {
  return async (
    pod: Pod,
    condition: PodScheduledCondition,
    ni: NominatingInfo | undefined,
  ): Promise<void> => {
    const nominate =
      ni?.nominatingMode === NominatingMode.ModeOverride &&
      (pod.status?.nominatedNodeName ?? "") !== ni.nominatedNodeName;
    const old = pod.status?.conditions?.find((c) => c.type === condition.type);
    const sameCondition =
      old &&
      old.status === condition.status &&
      old.reason === condition.reason &&
      old.message === condition.message;
    if (sameCondition && !nominate) return;
    // UpdatePodCondition: the transition time moves only when the status does.
    const lastTransitionTime =
      old && old.status === condition.status
        ? old.lastTransitionTime
        : new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, "Z");
    const cond: PodCondition = { ...condition, lastProbeTime: null, lastTransitionTime };
    const status: Record<string, unknown> = { conditions: [cond] };
    if (nominate) status.nominatedNodeName = ni.nominatedNodeName || null;
    await client.coreV1
      .pods(pod.metadata.namespace ?? "default")
      .patch(pod.metadata.name ?? "", StrategicMergePatchType, { status }, {}, "status");
  };
}
// #endregion api-writes

/** A built scheduler: its parts (for tests and /metrics) and its run and stop. */
export interface KubeScheduler {
  sched: Scheduler;
  cache: Cache;
  queue: PriorityQueue;
  profiles: Map<string, Framework>;
  informerFactory: SharedInformerFactory;
  metrics: SchedulerMetrics;
  /** By profile name. */
  recorders: Map<string, CorrelatingEventRecorder>;
  /**
   * Starts the informers and, once they have synced, the scheduling loop; resolves with
   * whether they synced (false: stopped first). The loop runs until `stop`.
   */
  start(): Promise<boolean>;
  // #region leader-election-split
  /**
   * chapter 6: `start` in two halves, so that a candidate keeps warm caches while it waits for
   * the Lease (upstream's startInformersAndWaitForSync, then sched.Run in OnStartedLeading).
   * The first starts the informers and resolves once they and their handlers have synced.
   */
  startInformersAndWaitForSync(): Promise<boolean>;
  /** The second: the queue, the cache's cleanup and the scheduling loop (once; later calls return the same loop). */
  run(): Promise<void>;
  /** Whether `run` was called: this scheduler is acting (the leader, or elections are off). */
  running(): boolean;
  // #endregion leader-election-split
  /** Settles when the scheduling loop has ended (after `stop`, or on its own). */
  loop(): Promise<void>;
  /** True once the informers and their handlers have synced (/readyz; a synced follower is ready too, as upstream's sched-handler-sync check). */
  ready(): boolean;
  stop(): Promise<void>;
}

// #region new
export function newScheduler(o: NewSchedulerOptions): KubeScheduler {
  const config = { ...defaultSchedulerConfiguration(), ...o.config };
  const clock = o.clock ?? realClock;
  const onError = o.onError ?? ((e: Error) => o.log?.(`E ${e.message}`));
  const informerFactory = o.informerFactory ?? newSchedulerInformerFactory(o.client);
  const podInformer = informerFactory.informerFor(Resources.pods) as unknown as SharedIndexInformer<Pod>;
  const nodeInformer = informerFactory.informerFor(Resources.nodes) as unknown as SharedIndexInformer<Node>;
  const podLister = informerFactory.lister(Resources.pods);
  // #region pdb-lister
  // chapter 5: PodDisruptionBudgets — upstream's DefaultPreemption always lists policy/v1 PDBs
  // (fh.SharedInformerFactory().Policy().V1().PodDisruptionBudgets().Lister()); the informer is
  // made here, before start, so the first cycle waits for its list like the pods' and nodes'.
  const pdbLister =
    o.servesPodDisruptionBudgets === false ? undefined : informerFactory.lister(podDisruptionBudgets);
  // #endregion pdb-lister

  // DefaultPreemption reads the live pod from the lister and records `Preempted` on a victim
  // through its profile's recorder (`recorders` is filled below, before any cycle runs).
  const registry = newInTreeRegistry(bindViaAPI(o.client), {
    podLister: (ns, name) => podLister.byNamespace(ns).get(name) as Pod | undefined,
    pdbLister: pdbLister && (() => pdbLister.list() as unknown as PodDisruptionBudget[]), // chapter 5
    recorder: {
      eventf: (pod, type, reason, _action, message) =>
        recorders.get(pod.spec.schedulerName || DefaultSchedulerName)?.(pod, type, reason, message),
    },
    onError,
  });
  for (const [name, factory] of o.outOfTreeRegistry ?? []) {
    if (registry.has(name)) throw new Error(`a plugin named ${name} already exists`);
    registry.set(name, factory);
  }
  const metrics = new SchedulerMetrics();
  const snapshot = new Snapshot();
  const cache = new Cache(0, clock);
  // The frameworks are built before the queue (its order comes from their QueueSort); the
  // nominator is filled in once the queue exists, as upstream's SetPodNominator.
  const fwkOpts: FrameworkOptions = { snapshot, clock, clientSet: o.client, informerFactory };
  // Metrics (issue 14, interpod2): the frameworks report extension-point and plugin durations.
  fwkOpts.metricsRecorder = metrics;
  if (config.profiles.length === 0) throw new Error("at least one profile is required");
  const profiles = newMap(config.profiles, registry, fwkOpts);
  const fwks = [...profiles.values()];
  const queue = new PriorityQueue(fwks[0].queueSortPlugins[0].less, {
    clock,
    podInitialBackoffDuration: config.podInitialBackoffSeconds * 1000,
    podMaxBackoffDuration: config.podMaxBackoffSeconds * 1000,
    preEnqueuePluginMap: new Map<string, PreEnqueuePlugin[]>(
      fwks.map((f) => [f.profileName, f.preEnqueuePlugins]),
    ),
    queueingHintMap: buildQueueingHintMap(new Map(fwks.map((f) => [f.profileName, f.enqueuePlugins()]))),
    podLister: (ns, name) => podLister.byNamespace(ns).get(name) as Pod | undefined,
    onIncoming: (q, event) => metrics.queueIncomingPod(q, event),
  });
  fwkOpts.podNominator = queue;
  fwkOpts.podActivator = queue;
  metrics.bindQueue(queue);
  // One recorder per profile, reporting as the profile's scheduler name (upstream's
  // recorderFactory(profile.SchedulerName)): `kubectl describe` says which scheduler placed a pod.
  const recorders = new Map(
    [...profiles.keys()].map((name) => [
      name,
      newEventRecorder(
        o.eventClient ?? o.client,
        name,
        { group: "", version: "v1", kind: "Pod" },
        { clock, onError: (e) => onError(e instanceof Error ? e : new Error(String(e))) },
      ),
    ]),
  );
  const sched = new Scheduler({
    cache,
    queue,
    snapshot,
    profiles,
    clock,
    percentageOfNodesToScore: config.percentageOfNodesToScore,
    recorder: {
      eventf: (pod, type, reason, _action, message) =>
        recorders.get(pod.spec.schedulerName || DefaultSchedulerName)?.(pod, type, reason, message),
    },
    updatePod: updatePodViaAPI(o.client, clock),
    getPod: (p) =>
      podLister.byNamespace(p.metadata.namespace ?? "").get(p.metadata.name ?? "") as Pod | undefined,
    onError,
    metrics,
    tracerProvider: o.tracerProvider, // chapter 8
    explain: o.explain,
    annotatePod: async (pod, annotations) => {
      await o.client.coreV1
        .pods(pod.metadata.namespace ?? "")
        .patch(pod.metadata.name ?? "", MergePatchType, { metadata: { annotations } });
    },
  });
  const registrations = addAllEventHandlers({ cache, queue, profiles, onError }, podInformer, nodeInformer);

  const abort = new AbortController();
  let loop: Promise<void> | undefined;
  let isReady = false;
  // #region run
  // Informers first, the loop second: a follower (chapter 6) does only the first half, so its
  // caches are warm when it takes over, and its /readyz is green while it waits.
  const startInformersAndWaitForSync = async (): Promise<boolean> => {
    informerFactory.start(abort.signal);
    const synced = await informerFactory.waitForCacheSync(abort.signal);
    if ([...synced.values()].some((s) => !s)) return false;
    if (!(await waitForCacheSync(abort.signal, ...registrations.map((r) => () => r.hasSynced()))))
      return false;
    isReady = true;
    return true;
  };
  const run = (): Promise<void> => {
    if (!loop) {
      queue.run();
      cache.run();
      loop = sched.run();
    }
    return loop;
  };
  const start = async (): Promise<boolean> => {
    if (!(await startInformersAndWaitForSync())) return false;
    void run();
    return true;
  };
  // #endregion run
  return {
    sched,
    cache,
    queue,
    profiles,
    informerFactory,
    metrics,
    recorders,
    start,
    startInformersAndWaitForSync,
    run,
    running: () => loop !== undefined,
    loop: () => loop ?? Promise.resolve(),
    ready: () => isReady,
    async stop() {
      isReady = false;
      queue.close();
      await loop;
      await sched.waitForBindings();
      abort.abort();
      await informerFactory.shutdown();
      cache.stop();
      await Promise.all([...recorders.values()].map((r) => r.flush()));
    },
  };
}
// #endregion new
