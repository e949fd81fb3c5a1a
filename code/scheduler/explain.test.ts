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
    // The default profile's other plugins are absent from filter-result: NodeAffinity (no
    // nodeSelector, no required affinity), NodePorts (no hostPort), PodTopologySpread (no
    // constraints of its own, and the System defaults need a selector from the pod's Services /
    // controller — none here, and the sim has no listers) and InterPodAffinity (no terms, no
    // existing pods with anti-affinity) return Skip at PreFilter, so they ran on no node.
    //
    // Score: NodeAffinity (no preferred terms), PodTopologySpread and InterPodAffinity are
    // skipped at PreScore for the same reasons; four plugins score.
    // Raw: TaintToleration counts untolerated PreferNoSchedule taints (e has 1).
    // NodeResourcesFit (LeastAllocated) = mean of (cap − req) × 100 / cap over cpu, memory:
    //   a: cpu (4000−1000)×100/4000 = 75, mem (8−2)×100/8 = 75 → 75;  b: 50, 50 → 50;  e: as a, 75.
    // BalancedAllocation = (1 − |cpu% − mem%| / 2) × 100: a 0.25/0.25, b 0.5/0.5, e 0.25/0.25 → 100.
    // ImageLocality: no node lists any image, so the sum is 0, clamped up to minThreshold (23 MB):
    //   100 × (23 MB − 23 MB) / (1000 MB × 1 container − 23 MB) = 0 on every node.
    const score = (taint: string, fit: string) => ({
      TaintToleration: taint,
      NodeResourcesFit: fit,
      NodeResourcesBalancedAllocation: "100",
      ImageLocality: "0",
    });
    expect(JSON.parse(ann[ScoreResultAnnotationKey])).toEqual({
      a: score("0", "75"),
      b: score("0", "50"),
      e: score("1", "75"),
    });
    // Final: TaintToleration normalized reversed, max 1: a, b 100 − 0 = 100, e 100 − 100 = 0; × 3.
    // The others have no NormalizeScore and weight 1 (ImageLocality 0 × 1 = 0).
    // Totals: a 300+75+100+0 = 475, b 300+50+100+0 = 450, e 0+75+100+0 = 175.
    expect(JSON.parse(ann[FinalScoreResultAnnotationKey])).toEqual({
      a: score("300", "75"),
      b: score("300", "50"),
      e: score("0", "75"),
    });
    expect(ann[SelectedNodeAnnotationKey]).toBe("a");
  });

  it("prints rows of nodes, Filter then Score columns (raw → normalized × weight), and the total", async () => {
    const sim = newSim({ nodes: nodes(), explain: true });
    sim.add(pod());
    await sim.drain();
    const table = formatExplainTable(sim.explained.get("default/web")!).split("\n");
    // A group line over the headers; the skipped plugins' columns are left out (legend below).
    expect(table[0].split(/ {2,}/)).toEqual(["", "Filter", "Score: raw → normalized ×weight"]);
    expect(table[1].split(/ {2,}/)).toEqual([
      "NODE",
      "NodeUnschedulable",
      "Name",
      "Taint",
      "Fit",
      "Taint",
      "Fit",
      "Balanced",
      "Image",
      "TOTAL",
    ]);
    const row = (n: string) => table.find((l) => l.startsWith(`${n} `))!.split(/ {2,}/);
    // Totals as in the annotations: 475, 450, 175.
    expect(row("a")).toEqual([
      "a ←",
      "✓",
      "✓",
      "✓",
      "✓",
      "0 → 100 ×3",
      "75 → 75 ×1",
      "100 → 100 ×1",
      "0 → 0 ×1",
      "475",
    ]);
    expect(row("b")).toEqual([
      "b",
      "✓",
      "✓",
      "✓",
      "✓",
      "0 → 100 ×3",
      "50 → 50 ×1",
      "100 → 100 ×1",
      "0 → 0 ×1",
      "450",
    ]);
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
      "-",
    ]);
    expect(row("d")).toEqual(["d", "✓", "✓", "✓", "Insufficient cpu", "-", "-", "-", "-", "-"]);
    expect(row("e")).toEqual([
      "e",
      "✓",
      "✓",
      "✓",
      "✓",
      "1 → 0 ×3",
      "75 → 75 ×1",
      "100 → 100 ×1",
      "0 → 0 ×1",
      "175",
    ]);
    expect(table.at(-2)).toBe(
      "not shown: plugins skipped for this pod: NodeAffinity, NodePorts, PodTopologySpread, InterPodAffinity",
    );
    expect(table.at(-1)).toBe(
      "abbreviated: Name = NodeName, Taint = TaintToleration, Fit = NodeResourcesFit, Balanced = NodeResourcesBalancedAllocation, Image = ImageLocality",
    );
    expect(Math.max(...table.map((l) => l.length))).toBeLessThanOrEqual(150);
  });

  it("names which column of a plugin is left out when its other one is shown", async () => {
    const sim = newSim({ nodes: nodes(), explain: true });
    const p = pod();
    p.spec.affinity = {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 1,
            preference: {
              matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: ["b"] }],
            },
          },
        ],
      },
    };
    sim.add(p);
    await sim.drain();
    const r = sim.explained.get("default/web")!;
    // Only preferred terms: PreFilter skips NodeAffinity, PreScore does not. Raw: b 1, a, e 0;
    // DefaultNormalizeScore (max 1): b 100, a, e 0; × 2 → b 450 + 200 = 650 beats a's 475.
    expect(r.raw.NodeAffinity).toEqual({ a: 0, b: 1, e: 0 });
    expect(sim.bound.map((b) => b.node)).toEqual(["b"]);
    const table = formatExplainTable(r).split("\n");
    expect(table[1].split(/ {2,}/)).toContain("NodeAffinity");
    expect(
      table
        .find((l) => l.startsWith("b "))!
        .split(/ {2,}/)
        .slice(6),
    ).toEqual(["1 → 100 ×2", "50 → 50 ×1", "100 → 100 ×1", "0 → 0 ×1", "650"]);
    expect(table.at(-2)).toBe(
      "not shown: plugins skipped for this pod: NodeAffinity (Filter), NodePorts, PodTopologySpread, InterPodAffinity",
    );
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
      // Filter's reasons, then DefaultPreemption's PostFilter: 16 CPU exceeds every node's whole
      // allocatable (4) and the taint is NoSchedule, so all five are UnschedulableAndUnresolvable
      // and no node is a candidate. Upstream 1.32 ends its own FitError with "." and then the
      // framework's " %v." separator adds another: the doubled period is upstream's.
      "0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 4 Insufficient cpu. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling..",
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
