import { describe, expect, it } from "vitest";
import type { Pod } from "../../../api/core.ts";
import { FakeClock } from "../../../client/util/clock.ts";
import { mulberry32 } from "../../../testing/random.ts";
import { ActionType, type ClusterEvent, NodeAdd, QueueingHint } from "../../framework/events.ts";
import type { EnqueueExtensions, PreEnqueuePlugin } from "../../framework/interface.ts";
import type { QueuedPodInfo } from "../../framework/types.ts";
import { less } from "../../plugins/queuesort/priority-sort.ts";
import { SchedulingGates } from "../../plugins/schedulinggates/scheduling-gates.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import { calculateBackoffDuration } from "./backoff-queue.ts";
import { buildQueueingHintMap } from "./queueing-hint-map.ts";
import { PriorityQueue, type PriorityQueueOptions } from "./scheduling-queue.ts";

/** A Filter-like plugin that rejects pods and registers NodeAdd with a hint: Queue only for big nodes. */
const fit: EnqueueExtensions = {
  name: () => "NodeResourcesFit",
  eventsToRegister: () => [
    {
      event: { resource: "Node", actionType: ActionType.Add },
      queueingHintFn: (_pod, _old, node) =>
        (node as ReturnType<typeof makeNode>).metadata.labels?.big === "true"
          ? QueueingHint.Queue
          : QueueingHint.QueueSkip,
    },
  ],
};
const bigNode = makeNode("big", { labels: { big: "true" } });
const smallNode = makeNode("small");

function setup(opts: PriorityQueueOptions = {}) {
  const clock = new FakeClock(1_000_000);
  const gates = new SchedulingGates();
  const plugins = new Map([["default-scheduler", [gates as PreEnqueuePlugin]]]);
  const hints = buildQueueingHintMap(
    new Map([["default-scheduler", [fit, gates]]]),
    opts.queueingHintsEnabled ?? true,
  );
  const q = new PriorityQueue(less, { clock, preEnqueuePluginMap: plugins, queueingHintMap: hints, ...opts });
  return { clock, q };
}

/** Pops a pod and fails it as rejected by `plugin` (as the scheduling cycle would). */
async function popAndReject(q: PriorityQueue, plugin = "NodeResourcesFit"): Promise<QueuedPodInfo> {
  const p = (await q.pop())!;
  const cycle = q.schedulingCycle();
  p.unschedulablePlugins.add(plugin);
  expect(q.addUnschedulableIfNotPresent(p, cycle)).toBeUndefined();
  q.done(p.podInfo.pod.metadata.uid!);
  return p;
}

async function drain(q: PriorityQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.activeQ.len() > 0) out.push((await q.pop())!.podInfo.pod.metadata.name!);
  return out;
}

describe("activeQ", () => {
  it("pops by priority, then by queue time (PrioritySort)", async () => {
    const { clock, q } = setup();
    q.add(makePod("low-early", { priority: 1 }));
    clock.step(10);
    q.add(makePod("high", { priority: 100 }));
    clock.step(10);
    q.add(makePod("low-late", { priority: 1 }));
    q.add(makePod("none"));
    expect(await drain(q)).toEqual(["high", "low-early", "low-late", "none"]);
    expect(q.schedulingCycle()).toBe(4);
  });

  it("makes pop wait for a pod, and close release it", async () => {
    const { q } = setup();
    let got: string | undefined = "pending";
    const waiting = q.pop().then((p) => {
      got = p?.podInfo.pod.metadata.name;
    });
    await Promise.resolve();
    expect(got).toBe("pending");
    q.add(makePod("a"));
    await waiting;
    expect(got).toBe("a");
    const closed = q.pop();
    q.close();
    expect(await closed).toBeUndefined();
    expect(await q.pop()).toBeUndefined();
  });

  it("counts attempts per pop and clears the last attempt's rejectors", async () => {
    const { clock, q } = setup();
    q.add(makePod("a"));
    const p = await popAndReject(q);
    expect(p.attempts).toBe(1);
    clock.step(1_000);
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, bigNode);
    expect(q.whereIs(p.podInfo.pod)).toBe("Active");
    const again = (await q.pop())!;
    expect(again.attempts).toBe(2);
    expect(again.unschedulablePlugins.size).toBe(0);
    expect(again.initialAttemptTimestamp).toBe(1_000_000);
  });
});

describe("backoff", () => {
  it("doubles from 1 s per attempt up to 10 s", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 20].map((n) => calculateBackoffDuration(n, 1_000, 10_000))).toEqual([
      0, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000, 10_000,
    ]);
  });

  it("holds a moved pod in backoffQ until its backoff ends, then the 1 s flush moves it", async () => {
    const { clock, q } = setup();
    q.run();
    const pod = makePod("a");
    q.add(pod);
    await popAndReject(q);
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, bigNode);
    expect(q.whereIs(pod)).toBe("Backoff");
    // attempts = 1 → 1 s from when it was put back.
    expect(q.backoffQ.backoffTime(q.backoffQ.list()[0])).toBe(clock.now() + 1_000);
    clock.step(999);
    expect(q.whereIs(pod)).toBe("Backoff");
    clock.step(1);
    expect(q.whereIs(pod)).toBe("Active");
    q.close();
  });

  it("sends a pod that failed with an error (no rejector) to backoffQ", async () => {
    const { q } = setup();
    const pod = makePod("a");
    q.add(pod);
    const p = (await q.pop())!;
    expect(q.addUnschedulableIfNotPresent(p, q.schedulingCycle())).toBeUndefined();
    expect(q.whereIs(pod)).toBe("Backoff");
    expect(q.addUnschedulableIfNotPresent(p, q.schedulingCycle())?.message).toBe(
      "Pod default/a is already present in the backoff queue",
    );
  });
});

describe("event-driven moves with queueing hints", () => {
  it("moves a rejected pod only when its rejector's hint says Queue", async () => {
    const { clock, q } = setup();
    const pod = makePod("a");
    q.add(pod);
    await popAndReject(q);
    expect(q.whereIs(pod)).toBe("Unschedulable");
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, smallNode);
    expect(q.whereIs(pod)).toBe("Unschedulable");
    // An event nobody registered for does nothing either.
    q.moveAllToActiveOrBackoffQueue(
      { resource: "Node", actionType: ActionType.Delete },
      smallNode,
      undefined,
    );
    expect(q.whereIs(pod)).toBe("Unschedulable");
    clock.step(5_000);
    // Backoff (1 s) long over: straight to activeQ.
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, bigNode);
    expect(q.whereIs(pod)).toBe("Active");
  });

  it("asks only the plugins that rejected the pod", async () => {
    const { q } = setup();
    const pod = makePod("a");
    q.add(pod);
    await popAndReject(q, "InterPodAffinity");
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, bigNode);
    expect(q.whereIs(pod)).toBe("Unschedulable");
  });

  it("treats a hint's error as Queue, and a Pending rejector's Queue as immediate", async () => {
    const failing: EnqueueExtensions = {
      name: () => "Broken",
      eventsToRegister: () => [{ event: NodeAdd, queueingHintFn: () => new Error("cannot decode node") }],
    };
    const clock = new FakeClock(0);
    const q = new PriorityQueue(less, {
      clock,
      queueingHintMap: buildQueueingHintMap(new Map([["default-scheduler", [failing]]])),
    });
    q.add(makePod("a"));
    await popAndReject(q, "Broken");
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, smallNode);
    expect(q.whereIs(makePod("a"))).toBe("Backoff");

    q.add(makePod("b"));
    const b = (await q.pop())!;
    b.pendingPlugins.add("Broken");
    q.addUnschedulableIfNotPresent(b, q.schedulingCycle());
    q.done("b");
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, smallNode);
    // Pending + Queue → activeQ even though b is still backing off.
    expect(q.whereIs(makePod("b"))).toBe("Active");
  });

  it("runs a rejected pod's hints over the events that came while it was in flight", async () => {
    const { q } = setup();
    q.add(makePod("a"));
    q.add(makePod("b"));
    const a = (await q.pop())!;
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, bigNode);
    a.unschedulablePlugins.add("NodeResourcesFit");
    q.addUnschedulableIfNotPresent(a, q.schedulingCycle());
    expect(q.whereIs(a.podInfo.pod)).toBe("Backoff");
    q.done("a");
    expect(q.activeQ.inFlightLogLength()).toBe(0);

    const b = (await q.pop())!;
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, smallNode);
    b.unschedulablePlugins.add("NodeResourcesFit");
    q.addUnschedulableIfNotPresent(b, q.schedulingCycle());
    expect(q.whereIs(b.podInfo.pod)).toBe("Unschedulable");
  });

  it("flushes pods parked longer than 5 minutes, whatever the hints", async () => {
    const { clock, q } = setup();
    q.run();
    const pod = makePod("a");
    q.add(pod);
    await popAndReject(q);
    clock.step(5 * 60_000);
    expect(q.whereIs(pod)).toBe("Unschedulable");
    // The next 30 s flush after the 5 minutes have passed.
    clock.step(30_000);
    expect(q.whereIs(pod)).toBe("Active");
    q.close();
  });
});

describe("the moveRequestCycle rule (queueing hints off)", () => {
  it("sends a pod that failed in a cycle during which a move request came to backoffQ", async () => {
    const { q } = setup({ queueingHintsEnabled: false });
    q.add(makePod("a"));
    q.add(makePod("b"));
    const a = (await q.pop())!;
    const aCycle = q.schedulingCycle();
    // While a is being scheduled, a node appears (even a small one: without hints every
    // registered event counts).
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, smallNode);
    a.unschedulablePlugins.add("NodeResourcesFit");
    q.addUnschedulableIfNotPresent(a, aCycle);
    expect(q.whereIs(a.podInfo.pod)).toBe("Backoff");

    const b = (await q.pop())!;
    const bCycle = q.schedulingCycle();
    b.unschedulablePlugins.add("NodeResourcesFit");
    q.addUnschedulableIfNotPresent(b, bCycle);
    expect(q.whereIs(b.podInfo.pod)).toBe("Unschedulable");
    // Without hints, any registered event moves it.
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, smallNode);
    expect(q.whereIs(b.podInfo.pod)).toBe("Backoff");
  });
});

describe("PreEnqueue gates", () => {
  it("keeps a gated pod out of activeQ, unmoved by events, until its own update removes the gate", async () => {
    const { q } = setup();
    const gated = makePod("g", { gates: ["example.com/quota"] });
    q.add(gated);
    expect(q.whereIs(gated)).toBe("Unschedulable");
    expect(q.pendingPodsMetric()).toEqual({ active: 0, backoff: 0, unschedulable: 0, gated: 1 });
    expect(q.unschedulablePods.get(gated)?.unschedulablePlugins.has("SchedulingGates")).toBe(true);
    q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, bigNode);
    q.flushUnschedulablePodsLeftover();
    expect(q.whereIs(gated)).toBe("Unschedulable");
    // A label change leaves the gate: still gated.
    const relabelled = { ...gated, metadata: { ...gated.metadata, labels: { x: "y" } } };
    q.update(gated, relabelled);
    expect(q.whereIs(gated)).toBe("Unschedulable");
    const ungated: Pod = { ...relabelled, spec: { ...relabelled.spec, schedulingGates: [] } };
    q.update(relabelled, ungated);
    expect(q.whereIs(gated)).toBe("Active");
    expect(q.pendingPodsMetric()).toEqual({ active: 1, backoff: 0, unschedulable: 0, gated: 0 });
  });

  it("says why in the plugin's status", () => {
    expect(new SchedulingGates().preEnqueue(makePod("g", { gates: ["a", "b"] }))?.message()).toBe(
      "waiting for scheduling gates: [a b]",
    );
  });
});

describe("update, delete, activate", () => {
  it("updates a pod in place in activeQ and re-sorts it", async () => {
    const { clock, q } = setup();
    const a = makePod("a", { priority: 1 });
    q.add(a);
    clock.step(1);
    q.add(makePod("b", { priority: 5 }));
    q.update(a, { ...a, spec: { ...a.spec, priority: 10 } });
    expect(await drain(q)).toEqual(["a", "b"]);
  });

  it("lets an update of a rejected pod (hints on) move it only via a matching hint", async () => {
    const { q } = setup();
    const a = makePod("a");
    q.add(a);
    await popAndReject(q);
    q.update(a, { ...a, metadata: { ...a.metadata, labels: { tier: "x" } } });
    expect(q.whereIs(a)).toBe("Unschedulable");
  });

  it("deletes from whichever queue holds the pod, and drops its nomination", async () => {
    const { q } = setup();
    const a = makePod("a", { nominatedNodeName: "n1" });
    q.add(a);
    expect(q.nominatedPodsForNode("n1").map((p) => p.pod.metadata.name)).toEqual(["a"]);
    q.delete(a);
    expect(q.whereIs(a)).toBeUndefined();
    expect(q.nominatedPodsForNode("n1")).toEqual([]);
    const b = makePod("b");
    q.add(b);
    await popAndReject(q);
    q.delete(b);
    expect(q.pendingPods().summary).toBe("activeQ:0; backoffQ:0; unschedulablePods:0");
  });

  it("activates a parked pod at once, skipping its backoff", async () => {
    const { q } = setup();
    const a = makePod("a");
    q.add(a);
    await popAndReject(q);
    q.activate([a]);
    expect(q.whereIs(a)).toBe("Active");
  });

  it("summarises the pending pods as upstream's PendingPods", async () => {
    const { q } = setup();
    q.add(makePod("a"));
    q.add(makePod("b"));
    await popAndReject(q);
    q.add(makePod("c"));
    q.add(makePod("g", { gates: ["x"] }));
    const { pods, summary } = q.pendingPods();
    expect(summary).toBe("activeQ:2; backoffQ:0; unschedulablePods:2");
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(["a", "b", "c", "g"]);
    expect(q.pendingPodsMetric()).toEqual({ active: 2, backoff: 0, unschedulable: 1, gated: 1 });
  });
});

describe("nominator", () => {
  it("keeps an in-memory nomination across an update that carries none, and follows one that does", () => {
    const { q } = setup();
    const a = makePod("a");
    q.add(a);
    const pi = q.activeQ.list()[0].podInfo;
    q.addNominatedPod(pi, { nominatingMode: 1, nominatedNodeName: "n1" });
    expect(q.nominator.nominatedNodeOf(a)).toBe("n1");
    const relabelled = { ...a, metadata: { ...a.metadata, labels: { x: "1" } } };
    q.update(a, relabelled);
    expect(q.nominator.nominatedNodeOf(a)).toBe("n1");
    const moved = { ...relabelled, status: { nominatedNodeName: "n2" } };
    q.update(relabelled, moved);
    expect(q.nominatedPodsForNode("n1")).toEqual([]);
    expect(q.nominatedPodsForNode("n2").map((p) => p.pod.metadata.name)).toEqual(["a"]);
  });

  it("does not nominate a pod the lister says is gone or bound", () => {
    const bound = makePod("a", { nodeName: "n9" });
    const { q } = setup({ podLister: (_ns, name) => (name === "a" ? bound : undefined) });
    q.add(makePod("a", { nominatedNodeName: "n1" }));
    q.add(makePod("gone", { nominatedNodeName: "n1" }));
    expect(q.nominatedPodsForNode("n1")).toEqual([]);
  });
});

describe("cluster event matching", () => {
  it("lets Pod match assigned and unscheduled pods, Update cover every update bit, * match all", async () => {
    const { matchEvent } = await import("../../framework/events.ts");
    const podAll: ClusterEvent = { resource: "Pod", actionType: ActionType.All };
    expect(matchEvent(podAll, { resource: "AssignedPod", actionType: ActionType.Delete })).toBe(true);
    expect(
      matchEvent(
        { resource: "Node", actionType: ActionType.Update },
        { resource: "Node", actionType: ActionType.UpdateNodeLabel },
      ),
    ).toBe(true);
    expect(
      matchEvent(
        { resource: "Node", actionType: ActionType.UpdateNodeTaint },
        { resource: "Node", actionType: ActionType.UpdateNodeLabel },
      ),
    ).toBe(false);
    expect(
      matchEvent(
        { resource: "Node", actionType: ActionType.Add },
        { resource: "Pod", actionType: ActionType.Add },
      ),
    ).toBe(false);
    expect(matchEvent({ resource: "*", actionType: ActionType.All }, NodeAdd)).toBe(true);
  });
});

describe("buildQueueingHintMap", () => {
  it("gives a plugin without EnqueueExtensions the wildcard, and a hint-less event always Queue", () => {
    const plain = { name: () => "Legacy" };
    const noHint: EnqueueExtensions = { name: () => "NoHint", eventsToRegister: () => [{ event: NodeAdd }] };
    const m = buildQueueingHintMap(new Map([["p", [plain, noHint, fit]]]), true).get("p")!;
    expect(m.map((e) => [e.event.resource, e.hints.map((h) => h.pluginName)])).toEqual([
      ["*", ["Legacy"]],
      // The same event registered twice is one entry with both plugins' hints.
      ["Node", ["NoHint", "NodeResourcesFit"]],
    ]);
    expect(m[1].hints[0].queueingHintFn(makePod("a"), undefined, smallNode)).toBe(QueueingHint.Queue);
    expect(m[1].hints[1].queueingHintFn(makePod("a"), undefined, smallNode)).toBe(QueueingHint.QueueSkip);
    const off = buildQueueingHintMap(new Map([["p", [fit]]]), false).get("p")!;
    expect(off[0].hints[0].queueingHintFn(makePod("a"), undefined, smallNode)).toBe(QueueingHint.Queue);
  });

  it("lets a wildcard-registered plugin's rejection be undone by any event", async () => {
    const legacy = { name: () => "Legacy" };
    const clock = new FakeClock(0);
    const q = new PriorityQueue(less, {
      clock,
      queueingHintMap: buildQueueingHintMap(new Map([["default-scheduler", [legacy]]])),
    });
    q.add(makePod("a"));
    await popAndReject(q, "Legacy");
    clock.step(10_000);
    q.moveAllToActiveOrBackoffQueue(
      { resource: "PersistentVolume", actionType: ActionType.Add },
      undefined,
      {},
    );
    expect(q.whereIs(makePod("a"))).toBe("Active");
  });
});

describe("pod update events", () => {
  it("names what an update changed: labels, a request scaled down, tolerations, gates removed", async () => {
    const { podSchedulingPropertiesChange } = await import("../../framework/events.ts");
    const old = makePod("a", { requests: [{ cpu: "1" }], gates: ["g"] });
    const labels = (es: ClusterEvent[]) => es.map((e) => e.label);
    expect(labels(podSchedulingPropertiesChange(old, old))).toEqual(["UnscheduledPodUpdate"]);
    const smaller = makePod("a", { requests: [{ cpu: "500m" }], gates: ["g"], labels: { x: "1" } });
    expect(labels(podSchedulingPropertiesChange(smaller, old))).toEqual([
      "UnscheduledPodLabelChange",
      "UnscheduledPodRequestScaledDown",
    ]);
    const bigger = makePod("a", { requests: [{ cpu: "2" }] });
    expect(labels(podSchedulingPropertiesChange(bigger, old))).toEqual([
      "UnscheduledPodSchedulingGateEliminated",
    ]);
  });
});

describe("a randomized run of the queue", () => {
  it("keeps every live pod in exactly one place, never a deleted one, never a gated one in activeQ", async () => {
    const seed = Number(process.env.SEED ?? 14);
    const rand = mulberry32(seed);
    const { clock, q } = setup();
    q.run();
    const live = new Map<string, Pod>();
    const inFlight = new Map<string, QueuedPodInfo>();
    let next = 0;
    try {
      for (let step = 0; step < 1500; step++) {
        const r = rand();
        if (r < 0.25) {
          const name = `p${next++}`;
          const pod = makePod(name, {
            priority: Math.floor(rand() * 3),
            gates: rand() < 0.2 ? ["g"] : undefined,
          });
          live.set(name, pod);
          q.add(pod);
        } else if (r < 0.45 && q.activeQ.len() > 0 && inFlight.size < 3) {
          const p = (await q.pop())!;
          inFlight.set(p.podInfo.pod.metadata.name!, p);
        } else if (r < 0.6 && inFlight.size > 0) {
          const [name, p] = [...inFlight][Math.floor(rand() * inFlight.size)];
          inFlight.delete(name);
          if (rand() < 0.3) {
            // Bound: the informer's delete (from the unscheduled view) follows.
            q.done(name);
            q.delete(p.podInfo.pod);
            live.delete(name);
          } else {
            p.unschedulablePlugins.add(rand() < 0.7 ? "NodeResourcesFit" : "InterPodAffinity");
            expect(q.addUnschedulableIfNotPresent(p, q.schedulingCycle()), `seed ${seed}`).toBeUndefined();
            q.done(name);
          }
        } else if (r < 0.7) {
          q.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, rand() < 0.5 ? bigNode : smallNode);
        } else if (r < 0.8 && live.size > 0) {
          const name = [...live.keys()][Math.floor(rand() * live.size)];
          const old = live.get(name)!;
          const updated: Pod =
            rand() < 0.5
              ? { ...old, spec: { ...old.spec, schedulingGates: [] } }
              : { ...old, metadata: { ...old.metadata, labels: { v: String(step) } } };
          live.set(name, updated);
          if (inFlight.has(name)) inFlight.get(name)!.podInfo.updatePod(updated);
          q.update(old, updated);
        } else if (r < 0.85 && live.size > 0) {
          const name = [...live.keys()][Math.floor(rand() * live.size)];
          if (inFlight.has(name)) continue;
          q.delete(live.get(name)!);
          live.delete(name);
        } else {
          clock.step(Math.floor(rand() * 40_000));
        }
        const counts = q.pendingPodsMetric();
        const placed = counts.active + counts.backoff + counts.unschedulable + counts.gated;
        expect(placed + inFlight.size, `seed ${seed} step ${step}`).toBe(live.size);
        // Collected, then checked once per step: an expect per pod per step is the slow part.
        const wrong: string[] = [];
        for (const [name, pod] of live) {
          const where = q.whereIs(pod);
          if (inFlight.has(name) ? where !== "InFlight" : where === undefined || where === "InFlight") {
            wrong.push(`${name} is ${where}`);
          }
          if ((pod.spec.schedulingGates?.length ?? 0) > 0 && where === "Active")
            wrong.push(`${name} gated but active`);
        }
        expect(wrong, `seed ${seed} step ${step}`).toEqual([]);
      }
    } finally {
      q.close();
    }
  });
});
