// NodeAffinity: PreFilter's node-name narrowing, Filter's reasons, Score and NormalizeScore
// worked by hand, addedAffinity, the node-change hint — and whole cycles through the sim.
import { describe, expect, it } from "vitest";
import type { Affinity, Node, NodeSelectorTerm, Pod } from "../../../api/core.ts";
import { prioritizeNodes } from "../../find-nodes.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { NodeAdd, QueueingHint } from "../../framework/events.ts";
import type { NodeScore } from "../../framework/interface.ts";
import { NodeInfo } from "../../framework/node-info.ts";
import { Code, codeOf } from "../../framework/status.ts";
import { newSim } from "../../testing/sim.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import { ErrReasonConflict, ErrReasonEnforced, ErrReasonPod, NodeAffinity } from "./node-affinity.ts";

type NodeAffinitySpec = NonNullable<Affinity["nodeAffinity"]>;
const withAffinity = (pod: Pod, nodeAffinity: NodeAffinitySpec): Pod => ({
  ...pod,
  spec: { ...pod.spec, affinity: { nodeAffinity } },
});
const required = (...nodeSelectorTerms: NodeSelectorTerm[]): NodeAffinitySpec => ({
  requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms },
});
const zoneIn = (...zones: string[]): NodeSelectorTerm => ({
  matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: zones }],
});
const nameIn = (...names: string[]): NodeSelectorTerm => ({
  matchFields: names.map((n) => ({ key: "metadata.name", operator: "In" as const, values: [n] })),
});
const nodeInfo = (n: Node) => {
  const ni = new NodeInfo();
  ni.setNode(n);
  return ni;
};

describe("PreFilter", () => {
  const pl = new NodeAffinity();

  it("is Skip when the pod has neither nodeSelector nor required node affinity", () => {
    expect(codeOf(pl.preFilter(new CycleState(), makePod("p"))[1])).toBe(Code.Skip);
    // preferred terms alone do not need Filter
    const p = withAffinity(makePod("p"), { preferredDuringSchedulingIgnoredDuringExecution: [] });
    expect(codeOf(pl.preFilter(new CycleState(), p)[1])).toBe(Code.Skip);
  });

  it("runs for a nodeSelector and returns all nodes", () => {
    const p = { ...makePod("p"), spec: { ...makePod("p").spec, nodeSelector: { disk: "ssd" } } };
    expect(pl.preFilter(new CycleState(), p)).toEqual([undefined, undefined]);
  });

  it("narrows to node names: the union over terms, the intersection within one", () => {
    const p = withAffinity(makePod("p"), required(nameIn("a", "b"), nameIn("c")));
    // term 1 names a AND b → ∅ ∩ …: its own set is {a} ∩ {b} = ∅; term 2 {c}; union {c}
    expect([...(pl.preFilter(new CycleState(), p)[0]?.nodeNames ?? [])]).toEqual(["c"]);
    const q = withAffinity(makePod("q"), required(nameIn("a"), nameIn("b")));
    expect([...(pl.preFilter(new CycleState(), q)[0]?.nodeNames ?? [])].sort()).toEqual(["a", "b"]);
  });

  it("one term without names allows every node", () => {
    const p = withAffinity(makePod("p"), required(nameIn("a"), zoneIn("z1")));
    expect(pl.preFilter(new CycleState(), p)[0]).toBeUndefined();
  });

  it("terms whose names cannot all hold are a conflict", () => {
    const p = withAffinity(makePod("p"), required(nameIn("a", "b")));
    const [, s] = pl.preFilter(new CycleState(), p);
    expect(codeOf(s)).toBe(Code.UnschedulableAndUnresolvable);
    expect(s?.reasons()).toEqual([ErrReasonConflict]);
  });
});

describe("Filter", () => {
  const run = (pl: NodeAffinity, pod: Pod, n: Node) => {
    const state = new CycleState();
    pl.preFilter(state, pod);
    return pl.filter(state, pod, nodeInfo(n));
  };

  it("rejects a node that misses the affinity, UnschedulableAndUnresolvable", () => {
    const p = withAffinity(makePod("p"), required(zoneIn("z1")));
    expect(run(new NodeAffinity(), p, makeNode("a", { zone: "z1" }))).toBeUndefined();
    const s = run(new NodeAffinity(), p, makeNode("b", { zone: "z2" }));
    expect(codeOf(s)).toBe(Code.UnschedulableAndUnresolvable);
    expect(s?.reasons()).toEqual([ErrReasonPod]);
  });

  it("checks the profile's addedAffinity first, with its own reason", () => {
    const pl = new NodeAffinity({ addedAffinity: required(zoneIn("z1")) });
    const s = run(pl, makePod("p"), makeNode("b", { zone: "z2" }));
    expect(s?.reasons()).toEqual([ErrReasonEnforced]);
    expect(run(pl, makePod("p"), makeNode("a", { zone: "z1" }))).toBeUndefined();
  });

  it("refuses a profile whose addedAffinity does not parse", () => {
    expect(
      () =>
        new NodeAffinity({
          addedAffinity: required({ matchExpressions: [{ key: "k", operator: "Gt", values: ["x"] }] }),
        }),
    ).toThrow(/^parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: /);
  });
});

describe("Score", () => {
  const pod = withAffinity(makePod("p"), {
    preferredDuringSchedulingIgnoredDuringExecution: [
      { weight: 20, preference: zoneIn("z1") },
      { weight: 60, preference: { matchExpressions: [{ key: "disk", operator: "In", values: ["ssd"] }] } },
    ],
  });
  const nodes = [
    makeNode("a", { zone: "z1" }),
    makeNode("b", { zone: "z1", labels: { disk: "ssd" } }),
    makeNode("c", { zone: "z2" }),
  ];

  it("sums the weights of the matching preferred terms, then scales the best to 100", () => {
    const pl = new NodeAffinity();
    const state = new CycleState();
    expect(pl.preScore(state, pod, [])).toBeUndefined();
    const scores: NodeScore[] = nodes.map((n) => ({
      name: n.metadata.name!,
      score: pl.score(state, pod, nodeInfo(n))[0],
    }));
    // raw: a 20, b 20 + 60 = 80, c 0
    expect(scores.map((s) => s.score)).toEqual([20, 80, 0]);
    pl.normalizeScore(state, pod, scores);
    // a: 100 × 20 / 80 = 25; b: 100; c: 0
    expect(scores.map((s) => s.score)).toEqual([25, 100, 0]);
  });

  it("adds addedAffinity's preferred terms to every pod's", () => {
    const pl = new NodeAffinity({
      addedAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 5, preference: zoneIn("z2") }],
      },
    });
    const state = new CycleState();
    // a pod without preferences still scores (PreScore is not Skip)
    expect(pl.preScore(state, makePod("q"), [])).toBeUndefined();
    expect(nodes.map((n) => pl.score(state, makePod("q"), nodeInfo(n))[0])).toEqual([0, 0, 5]);
  });

  it("is Skip at PreScore without preferences", () => {
    expect(codeOf(new NodeAffinity().preScore(new CycleState(), makePod("q"), []))).toBe(Code.Skip);
  });
});

describe("isSchedulableAfterNodeChange", () => {
  const pl = new NodeAffinity();
  const pod = withAffinity(makePod("p"), required(zoneIn("z1")));

  it("queues for an added node that matches, skips one that does not", () => {
    expect(pl.isSchedulableAfterNodeChange(pod, undefined, makeNode("a", { zone: "z1" }))).toBe(
      QueueingHint.Queue,
    );
    expect(pl.isSchedulableAfterNodeChange(pod, undefined, makeNode("a", { zone: "z2" }))).toBe(
      QueueingHint.QueueSkip,
    );
  });

  it("queues an update only when the node goes from unmatched to matched", () => {
    const z1 = makeNode("a", { zone: "z1" });
    const z2 = makeNode("a", { zone: "z2" });
    expect(pl.isSchedulableAfterNodeChange(pod, z2, z1)).toBe(QueueingHint.Queue);
    expect(
      pl.isSchedulableAfterNodeChange(pod, z1, {
        ...z1,
        metadata: { ...z1.metadata, labels: { ...z1.metadata.labels, x: "y" } },
      }),
    ).toBe(QueueingHint.QueueSkip);
    expect(pl.isSchedulableAfterNodeChange(pod, z1, z2)).toBe(QueueingHint.QueueSkip);
  });

  it("registers node add and label updates only", () => {
    expect(pl.eventsToRegister().map((e) => e.event)).toEqual([{ resource: "Node", actionType: 1 | 8 }]);
  });
});

describe("NodeAffinity in whole scheduling cycles", () => {
  const three = () => [
    makeNode("a", { zone: "z1" }),
    makeNode("b", { zone: "z2" }),
    makeNode("c", { zone: "z3" }),
  ];

  it("places pods with required affinity only on matching nodes", async () => {
    const sim = newSim({ nodes: three() });
    for (let i = 0; i < 4; i++) sim.add(withAffinity(makePod(`p${i}`), required(zoneIn("z1", "z3"))));
    await sim.drain();
    expect(sim.bound.map((b) => b.node).sort()).toEqual(["a", "a", "c", "c"]);
  });

  it("honours nodeSelector", async () => {
    const sim = newSim({ nodes: three() });
    const p = makePod("p");
    p.spec.nodeSelector = { "topology.kubernetes.io/zone": "z2" };
    sim.add(p);
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["b"]);
  });

  it("preferred affinity picks the heavier-weighted node", async () => {
    const sim = newSim({ nodes: three() });
    const p = withAffinity(makePod("p"), {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 10, preference: zoneIn("z1") },
        { weight: 90, preference: zoneIn("z3") },
      ],
    });
    sim.cache.updateSnapshot(sim.sched.snapshot);
    const state = new CycleState();
    sim.fwk.runPreFilterPlugins(state, p);
    const scores = prioritizeNodes(sim.fwk, state, p, sim.sched.snapshot.list());
    if (scores instanceof Error) throw scores;
    const affinity = Object.fromEntries(
      scores.map((s) => [s.name, s.scores.find((x) => x.name === "NodeAffinity")?.score]),
    );
    // raw a 10, b 0, c 90 → normalized 100 × 10 / 90 = 11, 0, 100 → × weight 2 = 22, 0, 200
    expect(affinity).toEqual({ a: 22, b: 0, c: 200 });
    sim.add(p);
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["c"]);
  });

  it("matchFields on metadata.name: only the named node is tried", async () => {
    const sim = newSim({ nodes: three() });
    sim.add(withAffinity(makePod("p"), required(nameIn("b"))));
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["b"]);
    // The named node full: the others are "absent" from the narrowed set, named after the plugin.
    const full = newSim({
      nodes: [
        makeNode("a"),
        makeNode("b", { allocatable: { cpu: "1", memory: "1Gi", pods: "10" } }),
        makeNode("c"),
      ],
    });
    full.add(withAffinity(makePod("q", { requests: [{ cpu: "2" }] }), required(nameIn("b"))));
    await full.drain();
    expect(full.events.map((e) => e.message)).toEqual([
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
    ]);
  });

  it("FailedScheduling counts the affinity reason per node", async () => {
    const sim = newSim({
      nodes: [
        makeNode("a", { zone: "z1", allocatable: { cpu: "1", memory: "1Gi", pods: "10" } }),
        makeNode("b", { zone: "z2" }),
        makeNode("c", { zone: "z3" }),
      ],
    });
    sim.add(withAffinity(makePod("p", { requests: [{ cpu: "2" }] }), required(zoneIn("z1"))));
    await sim.drain();
    // a passes NodeAffinity but fails NodeResourcesFit; b and c fail NodeAffinity (it runs first)
    expect(sim.events.map((e) => e.message)).toEqual([
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
    ]);
  });

  it("requeues the rejected pod when a matching node is added, not another one", async () => {
    const sim = newSim({ nodes: three() });
    const p = withAffinity(makePod("p"), required(zoneIn("z9")));
    sim.add(p);
    await sim.drain();
    expect(sim.queue.whereIs(p)).toBe("Unschedulable");
    sim.queue.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, makeNode("d", { zone: "z4" }));
    expect(sim.queue.whereIs(p)).toBe("Unschedulable");
    sim.queue.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, makeNode("e", { zone: "z9" }));
    expect(["Active", "Backoff"]).toContain(sim.queue.whereIs(p));
  });
});
