// Explain on a simulated cluster: the simulator's annotations on the pod (Filter verdicts per
// node and plugin, raw and final scores, the chosen node) and the table, with the scores worked
// out by hand from upstream's formulas; nothing is recorded when explain is off.
import { describe, expect, it } from "vitest";
import type { Node, Taint } from "../api/core.ts";
import {
  FilterResultAnnotationKey,
  FinalScoreResultAnnotationKey,
  formatExplainTable,
  ScoreResultAnnotationKey,
  SelectedNodeAnnotationKey,
} from "./explain.ts";
import { newSim } from "./testing/sim.ts";
import { makeNode, makePod } from "./testing/wrappers.ts";

const withTaint = (n: Node, taint: Taint): Node => ({ ...n, spec: { taints: [taint] } });

const nodes = () => [
  makeNode("a", { allocatable: { cpu: "4", memory: "8Gi", pods: "110" } }),
  makeNode("b", { allocatable: { cpu: "2", memory: "4Gi", pods: "110" } }),
  withTaint(makeNode("c"), { key: "dedicated", value: "gpu", effect: "NoSchedule" }),
  makeNode("d", { allocatable: { cpu: "500m", memory: "8Gi", pods: "110" } }),
  withTaint(makeNode("e"), { key: "spot", value: "true", effect: "PreferNoSchedule" }),
];
const pod = () => makePod("web", { requests: [{ cpu: "1", memory: "2Gi" }] });

describe("explain", () => {
  it("writes the simulator's annotations on the pod: every Filter verdict, raw and final scores", async () => {
    const sim = newSim({ nodes: nodes(), explain: true });
    sim.add(pod());
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["a"]);
    const ann = sim.pods.get("web")!.metadata.annotations!;
    const passed = {
      NodeUnschedulable: "passed",
      NodeName: "passed",
      TaintToleration: "passed",
      NodeResourcesFit: "passed",
    };
    expect(JSON.parse(ann[FilterResultAnnotationKey])).toEqual({
      a: passed,
      b: passed,
      // The first plugin that rejects decides; the ones after it never ran.
      c: {
        NodeUnschedulable: "passed",
        NodeName: "passed",
        TaintToleration: "node(s) had untolerated taint {dedicated: gpu}",
      },
      d: { ...passed, NodeResourcesFit: "Insufficient cpu" },
      e: passed,
    });
    // Raw: TaintToleration counts untolerated PreferNoSchedule taints (e has 1).
    // NodeResourcesFit (LeastAllocated) = mean of (cap − req) × 100 / cap over cpu, memory:
    //   a: cpu (4000−1000)×100/4000 = 75, mem (8−2)×100/8 = 75 → 75;  b: 50, 50 → 50;  e: as a, 75.
    // BalancedAllocation = (1 − |cpu% − mem%| / 2) × 100: a 0.25/0.25, b 0.5/0.5, e 0.25/0.25 → 100.
    expect(JSON.parse(ann[ScoreResultAnnotationKey])).toEqual({
      a: { TaintToleration: "0", NodeResourcesFit: "75", NodeResourcesBalancedAllocation: "100" },
      b: { TaintToleration: "0", NodeResourcesFit: "50", NodeResourcesBalancedAllocation: "100" },
      e: { TaintToleration: "1", NodeResourcesFit: "75", NodeResourcesBalancedAllocation: "100" },
    });
    // Final: TaintToleration normalized reversed, max 1: a, b 100 − 0 = 100, e 100 − 100 = 0; × 3.
    // The others have no NormalizeScore and weight 1. Totals: a 300+75+100 = 475, b 450, e 175.
    expect(JSON.parse(ann[FinalScoreResultAnnotationKey])).toEqual({
      a: { TaintToleration: "300", NodeResourcesFit: "75", NodeResourcesBalancedAllocation: "100" },
      b: { TaintToleration: "300", NodeResourcesFit: "50", NodeResourcesBalancedAllocation: "100" },
      e: { TaintToleration: "0", NodeResourcesFit: "75", NodeResourcesBalancedAllocation: "100" },
    });
    expect(ann[SelectedNodeAnnotationKey]).toBe("a");
  });

  it("prints rows of nodes, Filter then Score columns (raw → normalized × weight), and the total", async () => {
    const sim = newSim({ nodes: nodes(), explain: true });
    sim.add(pod());
    await sim.drain();
    const table = formatExplainTable(sim.explained.get("default/web")!).split("\n");
    expect(table[0].split(/ {2,}/)).toEqual([
      "NODE",
      "filter NodeUnschedulable",
      "filter NodeName",
      "filter TaintToleration",
      "filter NodeResourcesFit",
      "score TaintToleration",
      "score NodeResourcesFit",
      "score NodeResourcesBalancedAllocation",
      "TOTAL",
    ]);
    const row = (n: string) => table.find((l) => l.startsWith(`${n} `))!.split(/ {2,}/);
    expect(row("a")).toEqual(["a ←", "✓", "✓", "✓", "✓", "0 → 100 ×3", "75 → 75 ×1", "100 → 100 ×1", "475"]);
    expect(row("b")).toEqual(["b", "✓", "✓", "✓", "✓", "0 → 100 ×3", "50 → 50 ×1", "100 → 100 ×1", "450"]);
    expect(row("c")).toEqual([
      "c",
      "✓",
      "✓",
      "node(s) had untolerated taint {dedicated: gpu}",
      "-",
      "-",
      "-",
      "-",
      "-",
    ]);
    expect(row("d")).toEqual(["d", "✓", "✓", "✓", "Insufficient cpu", "-", "-", "-", "-"]);
    expect(row("e")).toEqual(["e", "✓", "✓", "✓", "✓", "1 → 0 ×3", "75 → 75 ×1", "100 → 100 ×1", "175"]);
  });

  it("explains a pod that fits nowhere: Filter verdicts, no scores, no selected node", async () => {
    const sim = newSim({ nodes: nodes(), explain: true });
    sim.add(makePod("big", { requests: [{ cpu: "16" }] }));
    await sim.drain();
    const ann = sim.pods.get("big")!.metadata.annotations!;
    expect(JSON.parse(ann[FilterResultAnnotationKey]).a.NodeResourcesFit).toBe("Insufficient cpu");
    expect(JSON.parse(ann[ScoreResultAnnotationKey])).toEqual({});
    expect(ann[SelectedNodeAnnotationKey]).toBeUndefined();
    expect(sim.events.at(-1)?.message).toBe(
      "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 4 Insufficient cpu.",
    );
  });

  it("records nothing when explain is off", async () => {
    const sim = newSim({ nodes: nodes() });
    sim.add(pod());
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["a"]);
    expect(sim.explained.size).toBe(0);
    expect(sim.pods.get("web")!.metadata.annotations).toBeUndefined();
  });
});
