/**
 * Simulated cluster — a scheduler wired to its own cache, queue and snapshot with a fake
 * binder, so scheduling and binding cycles run without an API server.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/testing/framework/framework_helpers.go (NewFramework, RegisterPluginAsExtensions)
 * @upstream kubernetes/kubernetes pkg/scheduler/schedule_one_test.go (fakeBinder, the test scheduler's setup)
 * @chapter 05-scheduler
 *
 * Invariants:
 * - a bind first waits for the test's `gate` (default: resolves at once), then succeeds unless
 *   `failBind` says otherwise; a successful bind is confirmed like the informer would:
 *   `cache.addPod` of the bound pod (unless `confirm` is false).
 * - randomness comes from the seed only; time from the FakeClock.
 * - preemption (DefaultPreemption) deletes gracefully: a victim is marked terminating (a
 *   deletionTimestamp and the DisruptionTarget condition) and stays on its node until the test
 *   calls `finishDeletions` — as a kubelet would after the grace period. Status writes
 *   (a changed nominatedNodeName) go to `pods` and reach the queue as the informer's update.
 */
import type { Node, Pod } from "../../api/core.ts";
import type { SharedInformerFactory } from "../../client/tools/cache/informer-factory.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { mulberry32 } from "../../testing/random.ts";
import { Cache } from "../backend/cache/cache.ts";
import { Snapshot } from "../backend/cache/snapshot.ts";
import { buildQueueingHintMap } from "../backend/queue/queueing-hint-map.ts";
import { PriorityQueue } from "../backend/queue/scheduling-queue.ts";
import type { ExplainResult } from "../explain.ts";
import { AssignedPodDelete } from "../framework/events.ts";
import { NominatingMode, type PodNominator, type PreEnqueuePlugin } from "../framework/interface.ts";
import type { PodDisruptionBudget } from "../framework/preemption/preemption.ts";
import { Framework, type FrameworkOptions } from "../framework/runtime/framework.ts";
import type { ProfileConfig, Registry } from "../framework/runtime/registry.ts";
import type { BindFunc } from "../plugins/defaultbinder/default-binder.ts";
import type {
  DefaultPreemption,
  SelectVictimsFunc,
} from "../plugins/defaultpreemption/default-preemption.ts";
import { defaultProfile, newInTreeRegistry } from "../plugins/registry.ts";
import { type EventRecorder, Scheduler } from "../schedule-one.ts";

export interface SimOptions {
  nodes?: Node[];
  seed?: number;
  profile?: ProfileConfig;
  /** Extra plugins by name (tests' own Reserve / Permit / Bind plugins). */
  registry?: Registry;
  /** Awaited before a bind completes; lets a test hold and release bindings. */
  gate?: (pod: Pod, node: string) => Promise<void>;
  failBind?: (pod: Pod, node: string) => Error | undefined;
  /** Confirm a successful bind in the cache at once, as the informer later would (default true). */
  confirm?: boolean;
  /** Informers for plugins that read beyond the snapshot (InterPodAffinity's namespaces). */
  informerFactory?: SharedInformerFactory;
  /** Explain every cycle: annotations on the live pod, results in `explained` (schedex). */
  explain?: boolean;
  /** The PDBs DefaultPreemption sees. */
  pdbs?: PodDisruptionBudget[];
  /** DefaultPreemption's victim selection core (exercise 5.6). */
  selectVictims?: SelectVictimsFunc;
  /** Fails a victim's eviction (an API error) when it returns one. */
  failDelete?: (victim: Pod) => Error | undefined;
  // Metrics (issue 14, interpod2): the framework's recorder, clock and sampling.
  frameworkMetrics?: Pick<FrameworkOptions, "metricsRecorder" | "metricsNow" | "samplePluginMetrics">;
}

export interface Sim {
  sched: Scheduler;
  cache: Cache;
  queue: PriorityQueue;
  fwk: Framework;
  clock: FakeClock;
  bound: { pod: Pod; node: string }[];
  events: { pod: string; type: string; reason: string; message: string }[];
  /** Live pods as the "informer" has them, by uid. */
  pods: Map<string, Pod>;
  /** With `explain`: the last cycle's results per pod, by namespace/name. */
  explained: Map<string, ExplainResult>;
  add(pod: Pod): void;
  /** Runs scheduling cycles until activeQ is empty, then waits for every binding. */
  drain(): Promise<void>;
  /** Victims whose graceful deletion began, in order. */
  deleted: Pod[];
  /** Ends every graceful deletion under way: the pods leave their nodes (AssignedPodDelete). */
  finishDeletions(): void;
  /** The DefaultPreemption plugin of the profile, if enabled. */
  preemption(): DefaultPreemption | undefined;
}

export function newSim(o: SimOptions = {}): Sim {
  const clock = new FakeClock();
  const cache = new Cache(0, clock);
  const snapshot = new Snapshot();
  const bound: Sim["bound"] = [];
  const events: Sim["events"] = [];
  const pods = new Map<string, Pod>();
  const explained = new Map<string, ExplainResult>();
  const bindFn: BindFunc = async (pod, node) => {
    await (o.gate?.(pod, node) ?? Promise.resolve());
    const err = o.failBind?.(pod, node);
    if (err) throw err;
    // A bind sets spec.nodeName on the server's object: what else was written on it stays.
    const live = pods.get(pod.metadata.uid ?? "");
    const boundPod = {
      ...pod,
      metadata: live?.metadata ?? pod.metadata,
      spec: { ...pod.spec, nodeName: node },
    };
    bound.push({ pod: boundPod, node });
    pods.set(pod.metadata.uid ?? "", boundPod);
    if (o.confirm !== false) cache.addPod(boundPod);
  };
  const deleted: Pod[] = [];
  // The informer's side of a write: the new object in `pods`, then the cache or the queue.
  const writePod = (next: Pod) => {
    const uid = next.metadata.uid ?? "";
    const cur = pods.get(uid);
    if (!cur) return;
    pods.set(uid, next);
    if (cur.spec.nodeName) cache.updatePod(cur, next);
    else queue.update(cur, next);
  };
  const registry = newInTreeRegistry(bindFn, {
    pdbLister: () => o.pdbs ?? [],
    podLister: (_ns, name) => [...pods.values()].find((p) => p.metadata.name === name),
    rand: mulberry32((o.seed ?? 1) + 1),
    selectVictims: o.selectVictims,
    // `recorder` is defined below; it exists by the time a preemption records anything.
    recorder: { eventf: (...args) => recorder.eventf(...args) },
    deleteVictim: async (victim, condition) => {
      const err = o.failDelete?.(victim);
      if (err) throw err;
      const cur = pods.get(victim.metadata.uid ?? "");
      if (!cur) return;
      const conditions = [
        ...(cur.status?.conditions ?? []).filter((c) => c.type !== condition.type),
        condition,
      ];
      const next: Pod = {
        ...cur,
        metadata: {
          ...cur.metadata,
          deletionTimestamp: new Date(clock.now()).toISOString(),
          deletionGracePeriodSeconds: cur.spec.terminationGracePeriodSeconds ?? 30,
        },
        status: { ...cur.status, conditions },
      };
      deleted.push(next);
      writePod(next);
    },
    clearNominatedNodeName: async (list) => {
      for (const p of list) {
        const cur = pods.get(p.metadata.uid ?? "");
        if (cur?.status?.nominatedNodeName)
          writePod({ ...cur, status: { ...cur.status, nominatedNodeName: undefined } });
      }
    },
  });
  for (const [k, v] of o.registry ?? []) registry.set(k, v);
  // The queue is built after the framework (it needs the QueueSort plugin): nominate through it lazily.
  const nominator: PodNominator = {
    addNominatedPod: (pi, ni) => queue.addNominatedPod(pi, ni),
    deleteNominatedPodIfExists: (pod) => queue.deleteNominatedPodIfExists(pod),
    updateNominatedPod: (oldPod, pi) => queue.updateNominatedPod(oldPod, pi),
    nominatedPodsForNode: (node) => queue.nominatedPodsForNode(node),
  };
  const fwk = new Framework(registry, o.profile ?? defaultProfile(), {
    snapshot,
    clock,
    podNominator: nominator,
    podActivator: { activate: (list) => queue.activate(list) },
    informerFactory: o.informerFactory,
    ...o.frameworkMetrics,
  });
  const queue = new PriorityQueue(fwk.queueSortPlugins[0].less, {
    clock,
    preEnqueuePluginMap: new Map<string, PreEnqueuePlugin[]>([[fwk.profileName, fwk.preEnqueuePlugins]]),
    queueingHintMap: buildQueueingHintMap(new Map([[fwk.profileName, fwk.enqueuePlugins()]])),
  });
  const recorder: EventRecorder = {
    eventf: (pod, type, reason, _action, message) =>
      events.push({ pod: `${pod.metadata.namespace}/${pod.metadata.name}`, type, reason, message }),
  };
  const sched = new Scheduler({
    cache,
    queue,
    snapshot,
    profiles: new Map([[fwk.profileName, fwk]]),
    rand: mulberry32(o.seed ?? 1),
    clock,
    recorder,
    getPod: (p) => pods.get(p.metadata.uid ?? ""),
    updatePod: async (pod, _condition, ni) => {
      const cur = pods.get(pod.metadata.uid ?? "");
      if (!cur || cur.spec.nodeName) return;
      const nnn =
        ni?.nominatingMode === NominatingMode.ModeOverride
          ? ni.nominatedNodeName
          : cur.status?.nominatedNodeName;
      // Only a changed nomination is written: a PodScheduled-only update would be one more
      // queue event in every test, and the events list already says what it would say.
      if ((nnn ?? "") === (cur.status?.nominatedNodeName ?? "")) return;
      writePod({ ...cur, status: { ...cur.status, nominatedNodeName: nnn || undefined } });
    },
    onError: () => {},
    explain: o.explain,
    onExplain: (pod, r) => explained.set(`${pod.metadata.namespace}/${pod.metadata.name}`, r),
    annotatePod: async (pod, annotations) => {
      const uid = pod.metadata.uid ?? "";
      const live = pods.get(uid);
      if (!live) return;
      const merged = { ...live.metadata.annotations, ...annotations };
      pods.set(uid, { ...live, metadata: { ...live.metadata, annotations: merged } });
    },
  });
  for (const n of o.nodes ?? []) cache.addNode(n);
  return {
    sched,
    cache,
    queue,
    fwk,
    clock,
    bound,
    events,
    pods,
    explained,
    add(pod) {
      pods.set(pod.metadata.uid ?? "", pod);
      queue.add(pod);
    },
    async drain() {
      while (queue.activeQ.len() > 0) await sched.scheduleOne();
      await sched.waitForBindings();
      await this.preemption()?.evaluator.wait();
    },
    deleted,
    finishDeletions() {
      for (const p of [...pods.values()]) {
        if (!p.metadata.deletionTimestamp || !p.spec.nodeName) continue;
        pods.delete(p.metadata.uid ?? "");
        cache.removePod(p);
        queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, p, undefined);
      }
    },
    preemption() {
      return fwk.plugins.get("DefaultPreemption") as DefaultPreemption | undefined;
    },
  };
}
