// The scheduling and binding cycles on a simulated cluster (fake binder, no API server):
// placement, the node sampling, FailedScheduling's message, and the undo paths.
import { describe, expect, it } from "vitest";
import type { Taint } from "../api/core.ts";
import { mulberry32 } from "../testing/random.ts";
import {
  findNodesThatFitPod,
  numFeasibleNodesToFind,
  prioritizeNodes,
  type SearchState,
  selectHost,
} from "./find-nodes.ts";
import { CycleState } from "./framework/cycle-state.ts";
import { Diagnosis, fitErrorMessage } from "./framework/diagnosis.ts";
import { NominatingMode } from "./framework/interface.ts";
import { Code, newStatus, type Status } from "./framework/status.ts";
import { defaultProfile } from "./plugins/registry.ts";
import { newSim } from "./testing/sim.ts";
import { makeNode, makePod } from "./testing/wrappers.ts";

const tainted = (name: string, taint: Taint) => {
  const n = makeNode(name);
  n.spec = { taints: [taint] };
  return n;
};

describe("numFeasibleNodesToFind", () => {
  it.each([
    [0, 50, 50], // fewer than 100: all
    [0, 100, 100], // 50 − 0 = 50 % of 100 = 50 → at least 100
    [0, 1000, 420], // 50 − 8 = 42 %
    [0, 5000, 500], // 50 − 40 = 10 %
    [0, 6000, 300], // 50 − 48 = 2 % → at least 5 %
    [10, 200, 100], // 20 → at least 100
    [30, 1000, 300], // the configured percentage
  ])("percentage %i, %i nodes → %i", (p, n, want) => {
    expect(numFeasibleNodesToFind(p, n)).toBe(want);
  });
});

describe("the scheduling cycle", () => {
  it("places the pod on the least allocated node and records Scheduled", async () => {
    const sim = newSim({ nodes: [makeNode("a"), makeNode("b"), makeNode("c")] });
    sim.cache.addPod(makePod("busy-a", { nodeName: "a", requests: [{ cpu: "2", memory: "4Gi" }] }));
    sim.cache.addPod(makePod("busy-c", { nodeName: "c", requests: [{ cpu: "1", memory: "1Gi" }] }));
    sim.add(makePod("p", { requests: [{ cpu: "1", memory: "1Gi" }] }));
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["b"]);
    expect(sim.events).toEqual([
      {
        pod: "default/p",
        type: "Normal",
        reason: "Scheduled",
        message: "Successfully assigned default/p to b",
      },
    ]);
    expect(sim.queue.whereIs(makePod("p"))).toBeUndefined();
  });

  it("counts an assumed pod before its binding is confirmed", async () => {
    // Bindings held open: the second pod must see the first one's CPU on its node.
    const held: (() => void)[] = [];
    const sim = newSim({
      nodes: [makeNode("a", { allocatable: { cpu: "1", memory: "1Gi", pods: "10" } })],
      gate: () => new Promise<void>((r) => held.push(r)),
    });
    sim.add(makePod("p1", { requests: [{ cpu: "600m" }] }));
    sim.clock.step(1); // p1 queued first
    sim.add(makePod("p2", { requests: [{ cpu: "600m" }] }));
    await sim.sched.scheduleOne();
    await sim.sched.scheduleOne();
    expect(held.length).toBe(1);
    // DefaultPreemption (default profile) finds no lower-priority pod to evict on a.
    expect(sim.events.map((e) => e.message)).toEqual([
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..",
    ]);
    for (const r of held) r();
    await sim.sched.waitForBindings();
    expect(sim.bound.map((b) => b.pod.metadata.name)).toEqual(["p1"]);
  });

  it("builds FailedScheduling's message: counts per reason, sorted as strings", async () => {
    const sim = newSim({
      nodes: [
        makeNode("a", { allocatable: { cpu: "1", memory: "8Gi", pods: "110" } }),
        tainted("b", { key: "dedicated", value: "gpu", effect: "NoSchedule" }),
        tainted("c", { key: "dedicated", value: "gpu", effect: "NoSchedule" }),
      ],
    });
    const updates: string[] = [];
    (sim.sched as unknown as { o: { updatePod: unknown } }).o.updatePod = async (
      _p: unknown,
      c: { reason: string; message: string },
    ) => {
      updates.push(`${c.reason}: ${c.message}`);
    };
    sim.add(makePod("p", { requests: [{ cpu: "500m" }, { cpu: "600m" }] }));
    await sim.drain();
    const msg =
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint {dedicated: gpu}." +
      // 1.1 CPU on a 1-CPU node is unresolvable like the taints: no node is worth a dry run.
      " preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..";
    expect(sim.events.map((e) => [e.reason, e.message])).toEqual([["FailedScheduling", msg]]);
    expect(updates).toEqual([`Unschedulable: ${msg}`]);
    // Rejected by plugins that registered events: it waits in unschedulablePods.
    expect(sim.queue.whereIs(makePod("p"))).toBe("Unschedulable");
  });

  it("sorts the reasons' strings as Go's sort.Strings does, and adds PreFilter / PostFilter text", () => {
    const d = new Diagnosis();
    for (let i = 0; i < 10; i++) d.nodeToStatus.set(`x${i}`, newStatus(Code.Unschedulable, "Too many pods"));
    d.nodeToStatus.set("y1", newStatus(Code.Unschedulable, "Insufficient cpu"));
    d.nodeToStatus.set("y2", newStatus(Code.Unschedulable, "Insufficient cpu"));
    d.postFilterMsg = "preemption: not eligible";
    expect(fitErrorMessage(12, d)).toBe(
      "0/12 nodes are available: 10 Too many pods, 2 Insufficient cpu. preemption: not eligible.",
    );
    const p = new Diagnosis();
    p.preFilterMsg = "node(s) didn't satisfy plugin X";
    p.nodeToStatus.set("a", newStatus(Code.Unschedulable, "ignored"));
    expect(fitErrorMessage(3, p)).toBe("0/3 nodes are available: node(s) didn't satisfy plugin X.");
  });

  it("the default profile's weights: TaintToleration ×3, the resource scores ×1", async () => {
    const soft = tainted("a", { key: "spot", effect: "PreferNoSchedule" });
    const sim = newSim({ nodes: [soft, makeNode("b")] });
    sim.cache.addPod(makePod("busy-b", { nodeName: "b", requests: [{ cpu: "2", memory: "4Gi" }] }));
    sim.cache.updateSnapshot(sim.sched.snapshot);
    const pod = makePod("p", { requests: [{ cpu: "1", memory: "1Gi" }] });
    const state = new CycleState();
    sim.fwk.runPreFilterPlugins(state, pod);
    const scores = prioritizeNodes(sim.fwk, state, pod, sim.sched.snapshot.list());
    if (scores instanceof Error) throw scores;
    const byNode = Object.fromEntries(
      scores.map((s) => [s.name, s.scores.map((x) => `${x.name}=${x.score}`)]),
    );
    // a: taint raw 1 → reversed 0 (×3 = 0); least (75 + 87) / 2 = 81; balanced 100 − |0.25 − 0.125|/2·100 = 93
    // b: taint raw 0 → 100 ×3 = 300; least (25 + 37) / 2 = 31; balanced 100 − |0.75 − 0.625|/2·100 = 93
    // both: ImageLocality 0 (no node has "pause"); NodeAffinity skipped at PreScore (no preferred terms)
    expect(byNode).toEqual({
      a: [
        "TaintToleration=0",
        "NodeResourcesFit=81",
        "NodeResourcesBalancedAllocation=93",
        "ImageLocality=0",
      ],
      b: [
        "TaintToleration=300",
        "NodeResourcesFit=31",
        "NodeResourcesBalancedAllocation=93",
        "ImageLocality=0",
      ],
    });
    expect(scores.map((s) => s.totalScore)).toEqual([174, 424]);
  });

  it("PostFilter runs when no node fits; its message and nomination reach the failure", async () => {
    const preempt = {
      name: () => "Preempt",
      postFilter: () => [
        { nominatingInfo: { nominatedNodeName: "a", nominatingMode: NominatingMode.ModeOverride } },
        newStatus(Code.Unschedulable, "preemption: 0/1 nodes are available: 1 No preemption victims found."),
      ],
    };
    const profile = defaultProfile();
    profile.plugins.postFilter = {
      enabled: [{ name: "Preempt" }],
      disabled: [{ name: "DefaultPreemption" }],
    };
    const sim = newSim({
      nodes: [makeNode("a", { allocatable: { cpu: "1", memory: "1Gi", pods: "10" } })],
      profile,
      registry: new Map([["Preempt", () => preempt]]),
    });
    sim.add(makePod("p", { requests: [{ cpu: "2" }] }));
    await sim.drain();
    // The doubled "..": preemption's own message ends with the FitError's "."; FitError adds
    // another after it — exactly what upstream 1.32's events show.
    expect(sim.events.map((e) => e.message)).toEqual([
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found..",
    ]);
    expect(sim.queue.nominatedPodsForNode("a").map((pi) => pi.pod.metadata.name)).toEqual(["p"]);
  });

  it("a PreFilter rejection gives every node its status and its message alone", async () => {
    const gate = {
      name: () => "Gate",
      preFilter: (): [undefined, Status] => [
        undefined,
        newStatus(Code.UnschedulableAndUnresolvable, "waiting for claim"),
      ],
    };
    const profile = defaultProfile();
    profile.plugins.preFilter = { enabled: [{ name: "Gate" }] };
    const sim = newSim({
      nodes: [makeNode("a"), makeNode("b")],
      profile,
      registry: new Map([["Gate", () => gate]]),
    });
    sim.add(makePod("p"));
    await sim.drain();
    // Every node is UnschedulableAndUnresolvable: preemption tries none of them.
    expect(sim.events.map((e) => e.message)).toEqual([
      "0/2 nodes are available: waiting for claim. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..",
    ]);
    const queued = sim.queue.unschedulablePods.get(makePod("p"));
    expect([...(queued?.unschedulablePlugins ?? [])]).toEqual(["Gate"]);
  });

  it("a PreFilterResult narrows the search to its nodes", async () => {
    const only = {
      name: () => "Only",
      preFilter: (): [{ nodeNames: Set<string> }, undefined] => [
        { nodeNames: new Set(["c", "gone"]) },
        undefined,
      ],
    };
    const profile = defaultProfile();
    profile.plugins.preFilter = { enabled: [{ name: "Only" }] };
    const sim = newSim({
      nodes: [makeNode("a"), makeNode("b"), makeNode("c")],
      profile,
      registry: new Map([["Only", () => only]]),
    });
    sim.add(makePod("p"));
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["c"]);
  });

  it("starts each search where the last stopped and stops at numFeasibleNodesToFind", () => {
    const sim = newSim({
      nodes: Array.from({ length: 200 }, (_, i) => makeNode(`n${String(i).padStart(3, "0")}`)),
    });
    sim.cache.updateSnapshot(sim.sched.snapshot);
    const search: SearchState = { nextStartNodeIndex: 150, percentageOfNodesToScore: 0, rand: mulberry32(1) };
    const r = findNodesThatFitPod(search, sim.fwk, sim.sched.snapshot, new CycleState(), makePod("p"));
    if (r instanceof Error) throw r;
    // 200 nodes: 50 − 1 = 49 % = 98 → at least 100, from index 150 wrapping to 49.
    expect(r[0].length).toBe(100);
    expect(r[0][0]).toBe(sim.sched.snapshot.list()[150]);
    expect(r[0][99]).toBe(sim.sched.snapshot.list()[49]);
    expect(search.nextStartNodeIndex).toBe(50);
  });

  it("selectHost breaks ties uniformly with the seeded source", () => {
    const rand = mulberry32(42);
    const list = ["a", "b", "c", "d"].map((name, i) => ({ name, scores: [], totalScore: i < 3 ? 90 : 10 }));
    const counts: Record<string, number> = {};
    for (let i = 0; i < 3000; i++) {
      const [host] = selectHost(list, 3, rand);
      counts[host] = (counts[host] ?? 0) + 1;
    }
    expect(counts.d).toBeUndefined();
    for (const n of ["a", "b", "c"]) expect(counts[n]).toBeGreaterThan(850);
    // The same seed, the same pick.
    expect(selectHost(list, 3, mulberry32(7))[0]).toBe(selectHost(list, 3, mulberry32(7))[0]);
  });
});

describe("the binding cycle's undo paths", () => {
  it("a failed bind unreserves, forgets the assumed pod and requeues with backoff", async () => {
    const sim = newSim({ nodes: [makeNode("a")], failBind: () => new Error("etcd unavailable") });
    sim.add(makePod("p", { requests: [{ cpu: "1" }] }));
    await sim.drain();
    expect(sim.cache.podCount()).toBe(0);
    expect(sim.events.map((e) => e.message)).toEqual([
      'running Bind plugin "DefaultBinder": etcd unavailable',
    ]);
    expect(sim.queue.whereIs(makePod("p"))).toBe("Backoff");
  });

  it("a Permit rejection while waiting becomes a one-node FitError", async () => {
    const permit = {
      name: () => "Gang",
      permit: (): [Status, number] => [newStatus(Code.Wait), 30_000],
    };
    const profile = defaultProfile();
    profile.plugins.permit = { enabled: [{ name: "Gang" }] };
    const sim = newSim({ nodes: [makeNode("a")], profile, registry: new Map([["Gang", () => permit]]) });
    sim.add(makePod("p"));
    await sim.sched.scheduleOne();
    expect(sim.cache.isAssumedPod(makePod("p", { nodeName: "a" }))).toBe(true);
    sim.fwk.getWaitingPod("p")!.reject("Gang", "gang incomplete");
    await sim.sched.waitForBindings();
    expect(sim.bound).toEqual([]);
    expect(sim.cache.podCount()).toBe(0);
    expect(sim.events.map((e) => e.message)).toEqual(["0/1 nodes are available: 1 gang incomplete."]);
  });

  it("a pod deleted while its attempt failed is not requeued", async () => {
    const sim = newSim({ nodes: [makeNode("a", { allocatable: { cpu: "1", memory: "1Gi", pods: "1" } })] });
    sim.cache.addPod(makePod("x", { nodeName: "a" }));
    sim.add(makePod("p"));
    sim.pods.delete("p");
    await sim.drain();
    // Preemption reads the pod from the lister first, as upstream: gone, so an Error status.
    expect(sim.events.map((e) => e.message)).toEqual([
      '0/1 nodes are available: 1 Too many pods. running PostFilter plugin "DefaultPreemption": preemption: pod "p" not found.',
    ]);
    expect(sim.queue.whereIs(makePod("p"))).toBeUndefined();
  });
});
