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
import type { PreEnqueuePlugin } from "../framework/interface.ts";
import { Framework, type ProfileConfig, type Registry } from "../framework/runtime/framework.ts";
import type { BindFunc } from "../plugins/defaultbinder/default-binder.ts";
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
  const registry = newInTreeRegistry(bindFn);
  for (const [k, v] of o.registry ?? []) registry.set(k, v);
  const fwk = new Framework(registry, o.profile ?? defaultProfile(), {
    snapshot,
    clock,
    informerFactory: o.informerFactory,
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
    },
  };
}
