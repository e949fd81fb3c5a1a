/**
 * The event handlers, driven directly and through stand-in informers: the assigned/unassigned
 * split, binding as an update that crosses the filters, and the cluster events that move
 * unschedulable pods (a node added, a taint removed, a bound pod deleted).
 */
import { describe, expect, it } from "vitest";
import type { Node, Pod } from "../api/core.ts";
import { DeletedFinalStateUnknown } from "../client/tools/cache/delta-fifo.ts";
import type { ResourceEventHandler, SharedIndexInformer } from "../client/tools/cache/shared-informer.ts";
import {
  addAllEventHandlers,
  addNodeToCache,
  deletePodFromCache,
  type HandlerTarget,
  NodeAllocatableChange,
  NodeConditionChange,
  NodeLabelChange,
  NodeSpecUnschedulableChange,
  NodeTaintChange,
  nodeSchedulingPropertiesChange,
  updateNodeInCache,
  updatePodInSchedulingQueue,
} from "./eventhandlers.ts";
import { newSim, type Sim } from "./testing/sim.ts";
import { makeNode, makePod } from "./testing/wrappers.ts";

/** A stand-in informer: it keeps the handlers it is given, so a test can call them. */
function stubInformer<T extends Pod | Node>() {
  const handlers: ResourceEventHandler<T>[] = [];
  const informer = {
    addEventHandler(h: ResourceEventHandler<T>) {
      handlers.push(h);
      return { hasSynced: () => true };
    },
  } as unknown as SharedIndexInformer<T>;
  return {
    informer,
    add: (o: T) => {
      for (const h of handlers) h.onAdd?.(o, false);
    },
    update: (a: T, b: T) => {
      for (const h of handlers) h.onUpdate?.(a, b);
    },
    delete: (o: T | DeletedFinalStateUnknown<T>) => {
      for (const h of handlers) h.onDelete?.(o);
    },
  };
}

const target = (sim: Sim): HandlerTarget => ({
  cache: sim.cache,
  queue: sim.queue,
  profiles: sim.sched.profiles,
  onError: (e) => {
    throw e;
  },
});

const withRV = (p: Pod, rv: string): Pod => ({ ...p, metadata: { ...p.metadata, resourceVersion: rv } });
const bound = (p: Pod, node: string, rv: string): Pod =>
  withRV({ ...p, spec: { ...p.spec, nodeName: node } }, rv);

/** Steps the queue's clock past the initial 1 s backoff and flushes backoffQ. */
function finishBackoff(sim: Sim): void {
  sim.clock.step(1_001);
  sim.queue.flushBackoffQCompleted();
}

describe("addAllEventHandlers: one pods informer, two filtered views", () => {
  function setup() {
    const sim = newSim({ nodes: [] });
    const pods = stubInformer<Pod>();
    const nodes = stubInformer<Node>();
    const regs = addAllEventHandlers(target(sim), pods.informer, nodes.informer);
    return { sim, pods, nodes, regs };
  }

  it("an unscheduled pod of our profile goes to the queue; a bound pod to the cache; another scheduler's pod nowhere", () => {
    const { sim, pods, regs } = setup();
    expect(regs).toHaveLength(3);
    const mine = withRV(makePod("mine"), "1");
    const theirs = withRV(makePod("theirs", { schedulerName: "other-scheduler" }), "1");
    const running = bound(makePod("running", { requests: [{ cpu: "1" }] }), "n1", "1");
    pods.add(mine);
    pods.add(theirs);
    pods.add(running);
    expect(sim.queue.whereIs(mine)).toBe("Active");
    expect(sim.queue.whereIs(theirs)).toBeUndefined();
    expect(sim.queue.whereIs(running)).toBeUndefined();
    expect(sim.cache.getPod(running)?.spec.nodeName).toBe("n1");
    expect(sim.cache.getPod(mine)).toBeUndefined();
    // A bound pod of any scheduler is counted: its room is taken whoever placed it.
    const theirsBound = bound(theirs, "n1", "2");
    pods.update(theirs, theirsBound);
    expect(sim.cache.getPod(theirsBound)?.spec.nodeName).toBe("n1");
  });

  it("a binding by someone else is an update across the filters: out of the queue, into the cache", () => {
    const { sim, pods, nodes } = setup();
    nodes.add(makeNode("n1"));
    const pod = withRV(makePod("p", { requests: [{ cpu: "1" }] }), "1");
    pods.add(pod);
    expect(sim.queue.whereIs(pod)).toBe("Active");
    pods.update(pod, bound(pod, "n1", "2"));
    expect(sim.queue.whereIs(pod)).toBeUndefined();
    expect(sim.cache.isAssumedPod(pod)).toBe(false);
    expect(sim.cache.getPod(pod)?.spec.nodeName).toBe("n1");
    // The node's picture counts it: 1 CPU of 4 requested.
    const snap = sim.sched.snapshot;
    sim.cache.updateSnapshot(snap);
    expect(snap.nodeInfoMap.get("n1")?.requested.milliCPU).toBe(1000);
  });

  it("a tombstone is cleaned up by both views (its pod may be stale)", () => {
    const { sim, pods } = setup();
    const running = bound(makePod("running"), "n1", "1");
    pods.add(running);
    // The tombstone carries the pod as last seen unbound, though the cache has it bound.
    const stale = withRV(makePod("running"), "1");
    pods.delete(new DeletedFinalStateUnknown("default/running", stale));
    // The stale copy has no nodeName: the cache removes what it counted anyway (as upstream).
    expect(sim.cache.getPod(running)).toBeUndefined();
    expect(sim.queue.whereIs(stale)).toBeUndefined();
  });
});

describe("the cluster events that move unschedulable pods", () => {
  it("a node added moves a pod that fit nowhere; after its backoff it is scheduled there", async () => {
    const sim = newSim({
      nodes: [makeNode("small", { allocatable: { cpu: "1", memory: "1Gi", pods: "10" } })],
    });
    const s = target(sim);
    const big = makePod("big", { requests: [{ cpu: "2" }] });
    sim.add(big);
    await sim.drain();
    expect(sim.queue.whereIs(big)).toBe("Unschedulable");
    expect(sim.events.at(-1)).toMatchObject({
      reason: "FailedScheduling",
      message:
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..",
    });
    addNodeToCache(s, makeNode("large"));
    // NodeResourcesFit registered Node/Add: the pod moves, to backoffQ (it failed just now).
    expect(sim.queue.whereIs(big)).toBe("Backoff");
    finishBackoff(sim);
    expect(sim.queue.whereIs(big)).toBe("Active");
    await sim.drain();
    expect(sim.bound.map((b) => `${b.pod.metadata.name}→${b.node}`)).toEqual(["big→large"]);
  });

  it("a bound pod deleted frees room: the waiting pod moves and lands where it was", async () => {
    const node = makeNode("n1", { allocatable: { cpu: "1", memory: "1Gi", pods: "10" } });
    const sim = newSim({ nodes: [node] });
    const a = makePod("a", { requests: [{ cpu: "800m" }] });
    const b = makePod("b", { requests: [{ cpu: "800m" }] });
    sim.add(a);
    await sim.drain();
    sim.add(b);
    await sim.drain();
    expect(sim.queue.whereIs(b)).toBe("Unschedulable");
    const aBound = sim.bound[0].pod;
    deletePodFromCache(target(sim), aBound);
    expect(sim.queue.whereIs(b)).toBe("Backoff");
    finishBackoff(sim);
    await sim.drain();
    expect(sim.bound.map((x) => `${x.pod.metadata.name}→${x.node}`)).toEqual(["a→n1", "b→n1"]);
  });

  it("a taint removed from a node moves the pod TaintToleration rejected; a label change does not", async () => {
    const tainted: Node = {
      ...makeNode("n1"),
      spec: { taints: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }] },
    };
    const sim = newSim({ nodes: [tainted] });
    const pod = makePod("p");
    sim.add(pod);
    await sim.drain();
    expect(sim.queue.whereIs(pod)).toBe("Unschedulable");
    const relabelled = { ...tainted, metadata: { ...tainted.metadata, labels: { x: "y" } } };
    updateNodeInCache(target(sim), tainted, relabelled);
    expect(sim.queue.whereIs(pod)).toBe("Unschedulable");
    const untainted = { ...relabelled, spec: {} };
    updateNodeInCache(target(sim), relabelled, untainted);
    expect(sim.queue.whereIs(pod)).toBe("Backoff");
  });

  it("an update with the same resourceVersion (a resync) leaves the queue alone", async () => {
    const sim = newSim({
      nodes: [makeNode("small", { allocatable: { cpu: "1", memory: "1Gi", pods: "10" } })],
    });
    const pod = withRV(makePod("big", { requests: [{ cpu: "2" }] }), "5");
    sim.add(pod);
    await sim.drain();
    const relabelled = { ...pod, metadata: { ...pod.metadata, labels: { a: "b" } } };
    updatePodInSchedulingQueue(target(sim), pod, relabelled);
    expect(sim.queue.whereIs(pod)).toBe("Unschedulable");
    const gateless = withRV({ ...relabelled, spec: { ...relabelled.spec } }, "6");
    updatePodInSchedulingQueue(target(sim), pod, gateless);
    // A real update: the pod's own change may make it fit (the queue re-judges it).
    expect(sim.queue.whereIs(pod)).not.toBeUndefined();
  });
});

describe("nodeSchedulingPropertiesChange", () => {
  const base = makeNode("n1");
  it("names each change the scheduler cares about, and nothing for a heartbeat", () => {
    const beat = (t: string): Node => ({
      ...base,
      status: { ...base.status, conditions: [{ type: "Ready", status: "True", lastHeartbeatTime: t }] },
    });
    expect(nodeSchedulingPropertiesChange(beat("t2"), beat("t1"))).toEqual([]);
    const cordoned: Node = { ...base, spec: { unschedulable: true } };
    // Cordoning can only make pods fit less: no event. Uncordoning can help.
    expect(nodeSchedulingPropertiesChange(cordoned, base)).toEqual([]);
    expect(nodeSchedulingPropertiesChange(base, cordoned)).toEqual([NodeSpecUnschedulableChange]);
    const changed: Node = {
      ...base,
      metadata: { ...base.metadata, labels: { zone: "a" } },
      spec: { taints: [{ key: "k", effect: "NoSchedule" }] },
      status: {
        allocatable: { cpu: "8" },
        conditions: [{ type: "Ready", status: "False" }],
      },
    };
    expect(nodeSchedulingPropertiesChange(changed, beat("t1"))).toEqual([
      NodeAllocatableChange,
      NodeLabelChange,
      NodeTaintChange,
      NodeConditionChange,
    ]);
  });
});
