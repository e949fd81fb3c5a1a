// NodeResourcesFit's scoring strategies besides LeastAllocated: MostAllocated and
// RequestedToCapacityRatio (the broken-linear shape, rounding, extended resources), the args'
// defaults, and whole cycles: MostAllocated packs, RTCR follows its shape.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../../api/core.ts";
import { prioritizeNodes } from "../../find-nodes.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { NodeInfo } from "../../framework/node-info.ts";
import type { ProfileConfig } from "../../framework/runtime/registry.ts";
import { newSim } from "../../testing/sim.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import { buildBrokenLinearFunction } from "../helper/shape-score.ts";
import { defaultProfile } from "../registry.ts";
import { defaultNodeResourcesFitArgs, Fit, type FitArgs } from "./fit.ts";
import { mostRequestedScore } from "./most-allocated.ts";
import { requestedToCapacityRatioScorer } from "./requested-to-capacity-ratio.ts";

const node = (alloc: Record<string, string>, ...pods: Pod[]) => {
  const ni = new NodeInfo(...pods.map((p) => ({ ...p, spec: { ...p.spec, nodeName: "n" } })));
  ni.setNode(makeNode("n", { allocatable: alloc }));
  return ni;
};
const std = { cpu: "4", memory: "8Gi", pods: "110" };
const score = (args: FitArgs, pod: Pod, ni: NodeInfo) => {
  const fit = new Fit(args);
  const state = new CycleState();
  fit.preScore(state, pod, [ni]);
  return fit.score(state, pod, ni)[0];
};
const pack = [
  { utilization: 0, score: 0 },
  { utilization: 100, score: 10 },
];

describe("MostAllocated", () => {
  it("mostRequestedScore is min(requested, capacity) × 100 / capacity, truncated", () => {
    expect(mostRequestedScore(2000, 4000)).toBe(50);
    expect(mostRequestedScore(3, 8)).toBe(37); // 300 / 8 = 37.5
    expect(mostRequestedScore(5, 4)).toBe(100); // the non-zero defaults may overshoot
    expect(mostRequestedScore(1, 0)).toBe(0);
  });

  it("scores the weighted mean after adding the pod", () => {
    // cpu (1000 + 1000) × 100 / 4000 = 50; memory (2Gi + 1Gi) × 100 / 8Gi = 37.5 → 37; (50 + 37) / 2 = 43
    const ni = node(std, makePod("old", { requests: [{ cpu: "1", memory: "2Gi" }] }));
    const pod = makePod("p", { requests: [{ cpu: "1", memory: "1Gi" }] });
    expect(score({ scoringStrategy: { type: "MostAllocated" } }, pod, ni)).toBe(43);
  });
});

describe("RequestedToCapacityRatio", () => {
  it("the broken-linear function: flat outside the points, straight between", () => {
    const f = buildBrokenLinearFunction([
      { utilization: 10, score: 20 },
      { utilization: 90, score: 80 },
    ]);
    expect([f(0), f(10), f(50), f(90), f(100)]).toEqual([20, 20, 50, 80, 80]); // f(50) = 20 + 60 × 40 / 80
    const peak = buildBrokenLinearFunction([
      { utilization: 0, score: 0 },
      { utilization: 50, score: 100 },
      { utilization: 100, score: 0 },
    ]);
    expect([peak(25), peak(50), peak(75), peak(37)]).toEqual([50, 100, 50, 74]); // 100 × 37 / 50 = 74
  });

  it("rounds the mean (not truncates) — one point above MostAllocated here", () => {
    // shape ×10 → (0,0) (100,100): cpu util 50 → 50, memory util trunc(37.5) = 37 → 37; (50 + 37) / 2 = 43.5 → 44
    const ni = node(std, makePod("old", { requests: [{ cpu: "1", memory: "2Gi" }] }));
    const pod = makePod("p", { requests: [{ cpu: "1", memory: "1Gi" }] });
    const args: FitArgs = {
      scoringStrategy: { type: "RequestedToCapacityRatio", requestedToCapacityRatio: { shape: pack } },
    };
    expect(score(args, pod, ni)).toBe(44);
  });

  it("leaves a resource scoring 0 out of the mean, weight and all", () => {
    // spread shape (0,100) (100,0): cpu full → util 100 → 0, left out; memory util 50 → 50 → 50 (not 25)
    const f = requestedToCapacityRatioScorer([
      { utilization: 0, score: 10 },
      { utilization: 100, score: 0 },
    ]);
    const res = [
      { name: "cpu", weight: 1 },
      { name: "memory", weight: 1 },
    ];
    expect(f([4000, 4096], [4000, 8192], res)).toBe(50);
    // over capacity counts as 100 % utilization
    expect(f([5000, 4096], [4000, 8192], res)).toBe(50);
  });

  it("weights an extended resource, counting what the node's pods already hold", () => {
    const alloc = { ...std, "example.com/gpu": "4" };
    const ni = node(alloc, makePod("old", { requests: [{ "example.com/gpu": "2" }] }));
    const args: FitArgs = {
      scoringStrategy: {
        type: "RequestedToCapacityRatio",
        resources: [
          { name: "cpu", weight: 1 },
          { name: "example.com/gpu", weight: 3 },
        ],
        requestedToCapacityRatio: { shape: pack },
      },
    };
    // cpu: old counts the 100m default → 100 + 1000 = 1100 → util trunc(27.5) = 27 → 27
    // gpu: 2 + 1 = 3 of 4 → 75; (27 × 1 + 75 × 3) / 4 = 252 / 4 = 63
    const pod = makePod("p", { requests: [{ cpu: "1", "example.com/gpu": "1" }] });
    expect(score(args, pod, ni)).toBe(63);
    // a pod that does not ask for the GPU is scored on CPU alone: 27
    expect(score(args, makePod("q", { requests: [{ cpu: "1" }] }), ni)).toBe(27);
  });
});

describe("NodeResourcesFitArgs", () => {
  it("defaults as upstream: LeastAllocated over cpu and memory, weight 0 → 1", () => {
    expect(defaultNodeResourcesFitArgs().scoringStrategy).toEqual({
      type: "LeastAllocated",
      resources: [
        { name: "cpu", weight: 1 },
        { name: "memory", weight: 1 },
      ],
    });
    expect(
      defaultNodeResourcesFitArgs({ scoringStrategy: { type: "MostAllocated" } }).scoringStrategy?.resources,
    ).toEqual([
      { name: "cpu", weight: 1 },
      { name: "memory", weight: 1 },
    ]);
    expect(
      defaultNodeResourcesFitArgs({
        scoringStrategy: { type: "MostAllocated", resources: [{ name: "cpu", weight: 0 }] },
      }).scoringStrategy?.resources,
    ).toEqual([{ name: "cpu", weight: 1 }]);
  });

  it("refuses RequestedToCapacityRatio without a shape, and unknown strategies", () => {
    expect(() => new Fit({ scoringStrategy: { type: "RequestedToCapacityRatio" } })).toThrow(
      "at least one point must be specified",
    );
    expect(
      () =>
        new Fit({
          scoringStrategy: {
            type: "RequestedToCapacityRatio",
            requestedToCapacityRatio: { shape: [...pack].reverse() },
          },
        }),
    ).toThrow("utilization values must be sorted in increasing order");
    expect(() => new Fit({ scoringStrategy: { type: "Random" as "MostAllocated" } })).toThrow(
      "scoring strategy Random is not supported",
    );
  });

  it("ignoredResources / ignoredResourceGroups: Filter does not check them", () => {
    const pod = makePod("p", { requests: [{ "example.com/gpu": "1", "vendor.io/fpga": "1" }] });
    const run = (args: FitArgs) => {
      const fit = new Fit(args);
      const state = new CycleState();
      fit.preFilter(state, pod);
      return fit.filter(state, pod, node(std))?.reasons();
    };
    expect(run({})).toEqual(["Insufficient example.com/gpu", "Insufficient vendor.io/fpga"]);
    expect(run({ ignoredResources: ["example.com/gpu"] })).toEqual(["Insufficient vendor.io/fpga"]);
    expect(
      run({ ignoredResources: ["example.com/gpu"], ignoredResourceGroups: ["vendor.io"] }),
    ).toBeUndefined();
  });
});

const withFitArgs = (args: FitArgs): ProfileConfig => ({
  ...defaultProfile(),
  pluginConfig: [{ name: "NodeResourcesFit", args }],
});

describe("scoring strategies in whole scheduling cycles", () => {
  const pods = () => [0, 1, 2, 3].map((i) => makePod(`p${i}`, { requests: [{ cpu: "1", memory: "2Gi" }] }));
  const nodes = () => [makeNode("a"), makeNode("b"), makeNode("c")];

  it("MostAllocated packs: four pods fill one node", async () => {
    const sim = newSim({
      nodes: nodes(),
      profile: withFitArgs({ scoringStrategy: { type: "MostAllocated" } }),
    });
    for (const p of pods()) {
      sim.add(p);
      await sim.drain();
    }
    // pod k (1 CPU / 2Gi) scores its predecessors' node (k+1) × 25 — 50, 75, 100 — against 25 for an empty one
    expect(new Set(sim.bound.map((b) => b.node)).size).toBe(1);
  });

  it("LeastAllocated (the default) spreads the same pods", async () => {
    const sim = newSim({ nodes: nodes() });
    for (const p of pods()) {
      sim.add(p);
      await sim.drain();
    }
    expect(new Set(sim.bound.slice(0, 3).map((b) => b.node)).size).toBe(3);
  });

  it("RequestedToCapacityRatio follows its shape: a peak at 50 % prefers the half-full node", async () => {
    const args: FitArgs = {
      scoringStrategy: {
        type: "RequestedToCapacityRatio",
        resources: [{ name: "cpu", weight: 1 }],
        requestedToCapacityRatio: {
          shape: [
            { utilization: 0, score: 0 },
            { utilization: 50, score: 10 },
            { utilization: 100, score: 0 },
          ],
        },
      },
    };
    const sim = newSim({ nodes: nodes(), profile: withFitArgs(args) });
    sim.cache.addPod(makePod("busy-a", { nodeName: "a", requests: [{ cpu: "3" }] }));
    sim.cache.addPod(makePod("busy-b", { nodeName: "b", requests: [{ cpu: "1" }] }));
    const pod = makePod("p", { requests: [{ cpu: "1" }] });
    sim.cache.updateSnapshot(sim.sched.snapshot);
    const state = new CycleState();
    sim.fwk.runPreFilterPlugins(state, pod);
    const scores = prioritizeNodes(sim.fwk, state, pod, sim.sched.snapshot.list());
    if (scores instanceof Error) throw scores;
    const fit = Object.fromEntries(
      scores.map((s) => [s.name, s.scores.find((x) => x.name === "NodeResourcesFit")?.score]),
    );
    // a: 4000 / 4000 → util 100 → 0 (left out, weight sum 0) → 0
    // b: 2000 / 4000 → util 50 → 100;  c: 1000 / 4000 → util 25 → 100 × 25 / 50 = 50
    expect(fit).toEqual({ a: 0, b: 100, c: 50 });
    sim.add(pod);
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["b"]);
  });
});
