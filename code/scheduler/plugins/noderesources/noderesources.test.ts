// NodeResourcesFit (Filter reasons, LeastAllocated) and BalancedAllocation, with expected
// scores worked by hand from upstream's formulas (the arithmetic is in each comment).
import { describe, expect, it } from "vitest";
import { CycleState } from "../../framework/cycle-state.ts";
import { NodeInfo } from "../../framework/node-info.ts";
import { Code, codeOf } from "../../framework/status.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import { BalancedAllocation, balancedResourceScorer } from "./balanced-allocation.ts";
import { Fit } from "./fit.ts";
import { leastRequestedScore } from "./least-allocated.ts";

const node = (alloc = { cpu: "4", memory: "8Gi", pods: "110" }, ...pods: ReturnType<typeof makePod>[]) => {
  const ni = new NodeInfo(...pods.map((p) => ({ ...p, spec: { ...p.spec, nodeName: "n" } })));
  ni.setNode(makeNode("n", { allocatable: alloc }));
  return ni;
};
const existing = makePod("old", { requests: [{ cpu: "1", memory: "2Gi" }] });

function filter(pod: ReturnType<typeof makePod>, ni: NodeInfo) {
  const fit = new Fit();
  const state = new CycleState();
  fit.preFilter(state, pod);
  return fit.filter(state, pod, ni);
}

function score(pl: Fit | BalancedAllocation, pod: ReturnType<typeof makePod>, ni: NodeInfo) {
  const state = new CycleState();
  const pre = pl.preScore(state, pod, [ni]);
  return { pre, score: pl.score(state, pod, ni)[0] };
}

describe("NodeResourcesFit Filter", () => {
  it("passes when the request fits what the node's pods leave", () => {
    expect(
      filter(makePod("p", { requests: [{ cpu: "3", memory: "6Gi" }] }), node(undefined, existing)),
    ).toBeUndefined();
  });

  it("names every shortfall, Unschedulable while eviction could help", () => {
    const s = filter(
      makePod("p", { requests: [{ cpu: "3500m", memory: "7Gi" }] }),
      node(undefined, existing),
    );
    expect(codeOf(s)).toBe(Code.Unschedulable);
    expect(s?.reasons()).toEqual(["Insufficient cpu", "Insufficient memory"]);
  });

  it("is UnschedulableAndUnresolvable when the request exceeds the whole node", () => {
    const s = filter(makePod("p", { requests: [{ cpu: "5" }] }), node(undefined, existing));
    expect(codeOf(s)).toBe(Code.UnschedulableAndUnresolvable);
    expect(s?.reasons()).toEqual(["Insufficient cpu"]);
  });

  it("counts pods first, even for a pod that requests nothing", () => {
    const s = filter(makePod("p"), node({ cpu: "4", memory: "8Gi", pods: "1" }, existing));
    expect(s?.reasons()).toEqual(["Too many pods"]);
  });

  it("checks extended resources the pod requests", () => {
    const s = filter(makePod("p", { requests: [{ "example.com/gpu": "1" }] }), node(undefined, existing));
    expect(s?.reasons()).toEqual(["Insufficient example.com/gpu"]);
    expect(codeOf(s)).toBe(Code.UnschedulableAndUnresolvable);
  });
});

describe("LeastAllocated", () => {
  it("leastRequestedScore is (capacity − requested) × 100 / capacity, truncated", () => {
    expect(leastRequestedScore(2000, 4000)).toBe(50);
    expect(leastRequestedScore(3, 8)).toBe(62); // 500/8 = 62.5
    expect(leastRequestedScore(5, 4)).toBe(0);
    expect(leastRequestedScore(1, 0)).toBe(0);
  });

  it("scores the mean of CPU and memory after adding the pod", () => {
    // cpu: (4000 − 2000) × 100 / 4000 = 50; memory: (8Gi − 3Gi) × 100 / 8Gi = 62; (50 + 62) / 2 = 56
    const pod = makePod("p", { requests: [{ cpu: "1", memory: "1Gi" }] });
    expect(score(new Fit(), pod, node(undefined, existing)).score).toBe(56);
  });

  it("counts a request-less pod as 100m / 200Mi", () => {
    // cpu: 3900 × 100 / 4000 = 97; memory: (8192 − 200)Mi × 100 / 8192Mi = 97.55 → 97; → 97
    expect(score(new Fit(), makePod("p"), node()).score).toBe(97);
  });

  it("weights resources as configured", () => {
    // cpu 50 × 3, memory 62 × 1 → (150 + 62) / 4 = 53
    const fit = new Fit({
      scoringStrategy: {
        type: "LeastAllocated",
        resources: [
          { name: "cpu", weight: 3 },
          { name: "memory", weight: 1 },
        ],
      },
    });
    const pod = makePod("p", { requests: [{ cpu: "1", memory: "1Gi" }] });
    expect(score(fit, pod, node(undefined, existing)).score).toBe(53);
  });
});

describe("NodeResourcesBalancedAllocation", () => {
  it("scores (1 − |f_cpu − f_mem| / 2) × 100", () => {
    // cpu (1000 + 1000) / 4000 = 0.5; memory (2Gi + 1Gi) / 8Gi = 0.375; std 0.0625 → 93.75 → 93
    const pod = makePod("p", { requests: [{ cpu: "1", memory: "1Gi" }] });
    expect(score(new BalancedAllocation(), pod, node(undefined, existing))).toEqual({
      pre: undefined,
      score: 93,
    });
  });

  it("caps a fraction at 1 and uses the population deviation for three resources", () => {
    // fractions 0.5, 0.25, min(2, 1) = 1: mean 0.5833; variance (0.00694 + 0.11111 + 0.17361) / 3
    // = 0.09722; std 0.31180; (1 − 0.31180) × 100 = 68.8 → 68
    expect(balancedResourceScorer([2, 2, 2], [4, 8, 1])).toBe(68);
    // one resource: no deviation
    expect(balancedResourceScorer([3, 0], [4, 0])).toBe(100);
  });

  it("scores a pod that requests nothing by the node's own balance (v1.32 does not skip it)", () => {
    // real requests, not the non-zero defaults: cpu 1000 / 4000 = 0.25, memory 2Gi / 8Gi = 0.25
    // → std 0 → 100; an empty node: both fractions 0 → 100 as well
    expect(score(new BalancedAllocation(), makePod("p"), node(undefined, existing))).toEqual({
      pre: undefined,
      score: 100,
    });
    // cpu 3000 / 4000 = 0.75, memory 2Gi / 8Gi = 0.25 → std 0.25 → 75
    const heavy = makePod("cpu-heavy", { requests: [{ cpu: "3", memory: "2Gi" }] });
    expect(score(new BalancedAllocation(), makePod("p"), node(undefined, heavy)).score).toBe(75);
  });
});
