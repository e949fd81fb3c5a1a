// Chapter 5's demo, run as a learner runs it: every pod's decision in upstream's words, the one
// that fits nowhere with FailedScheduling's counted reasons, and the explain tables whose numbers
// are worked out by hand here from upstream's formulas. Run twice, it prints the same (seeded).
import { beforeAll, describe, expect, it } from "vitest";
import { runDemoToEnd } from "../demo-process.ts";

describe("npm run chapter -- 5", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];
  const row = (node: string, from: string) => {
    const start = lines.findIndex((l) => l.includes(from));
    const l = lines.slice(start).find((x) => x.trim().startsWith(`${node} `));
    return l?.trim().split(/ {2,}/);
  };

  beforeAll(async () => {
    out = await runDemoToEnd("05-scheduler", [], {}, 55_000);
    lines = out.stdout.split("\n");
  }, 60_000);

  it("runs every step and exits 0", () => {
    expect(out.code, out.stderr + out.stdout.slice(-2000)).toBe(0);
    for (const n of [1, 2, 3, 4, 5]) expect(out.stdout).toMatch(new RegExp(`^${n}\\. `, "m"));
  });

  it("prints each decision as upstream's Scheduled and FailedScheduling events", () => {
    for (const [pod, node] of [
      ["web-1", "node-a"],
      ["api", "node-b"],
      ["cache", "node-d"],
      ["trainer", "node-c"],
    ]) {
      expect(out.stdout).toContain(`Scheduled        Successfully assigned default/${pod} to ${node}`);
    }
    expect(out.stdout).toContain(
      // Filter's reasons, then DefaultPreemption's: huge's 16 CPU exceeds every node's whole
      // allocatable, so Fit says UnschedulableAndUnresolvable (as do the NoSchedule taint and the
      // cordon); no node is a candidate and all 5 count as "Preemption is not helpful". Upstream
      // 1.32 prints the inner FitError's "." and then its separator's ".": the doubled period.
      "FailedScheduling 0/5 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable, 3 Insufficient cpu, 3 Insufficient memory. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling..",
    );
  });

  it("explains api's placement with the scores upstream's formulas give", () => {
    // Columns: NODE, Filter (NodeUnschedulable, NodeName, TaintToleration, NodeResourcesFit),
    // Score (TaintToleration ×3, NodeResourcesFit ×1, BalancedAllocation ×1, ImageLocality ×1),
    // TOTAL. api has no nodeSelector / affinity, host ports or spread constraints (and the sim
    // has no Service / controller listers for PodTopologySpread's System defaults), so
    // NodeAffinity, NodePorts, PodTopologySpread and InterPodAffinity skip themselves at
    // PreFilter and PreScore and have no column.
    // node-a holds web-1, web-2 (1 CPU, 1Gi); api asks 1 CPU, 2Gi.
    // LeastAllocated: cpu (4 − 2) / 4 = 50, memory (8 − 3) / 8 = 62.5 → 62; mean 56.
    // Balanced: fractions 0.5 and 0.375 → (1 − 0.125 / 2) × 100 = 93.75 → 93. Taint 100 × 3.
    // ImageLocality: no node lists any image → sum 0, clamped to minThreshold → 0.
    // Total 300 + 56 + 93 + 0 = 449.
    expect(row("node-a", "Why did api")).toEqual([
      "node-a",
      "✓",
      "✓",
      "✓",
      "✓",
      "0 → 100 ×3",
      "56 → 56 ×1",
      "93 → 93 ×1",
      "0 → 0 ×1",
      "449",
    ]);
    // node-b empty: cpu 1 / 2 → 50, memory 2 / 4 → 50 → 50; balanced 100; image 0;
    // total 300 + 50 + 100 + 0 = 450 wins by 1.
    expect(row("node-b ←", "Why did api")).toEqual([
      "node-b ←",
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
    // node-d: one untolerated PreferNoSchedule taint → normalized reversed to 0; empty 4 CPU /
    // 8Gi: cpu 3 / 4 → 75, memory 6 / 8 → 75; total 0 + 75 + 100 + 0 = 175.
    expect(row("node-d", "Why did api")?.slice(5)).toEqual([
      "1 → 0 ×3",
      "75 → 75 ×1",
      "100 → 100 ×1",
      "0 → 0 ×1",
      "175",
    ]);
    expect(row("node-e", "Why did api")?.slice(0, 3)).toEqual(["node-e", "node(s) were unschedulable", "-"]);
    const from = lines.findIndex((l) => l.includes("Why did api"));
    const legend = lines.slice(from).find((l) => l.includes("not shown:"));
    expect(legend?.trim()).toBe(
      "not shown: plugins skipped for this pod: NodeAffinity, NodePorts, PodTopologySpread, InterPodAffinity",
    );
  });

  it("explains the pod that fits nowhere: every node's Filter verdict, nothing scored", () => {
    expect(row("node-a", "Why does huge")).toEqual([
      "node-a",
      "✓",
      "✓",
      "✓",
      "Insufficient cpu, Insufficient memory",
      "-",
    ]);
    expect(row("node-c", "Why does huge")?.[3]).toBe("node(s) had untolerated taint {dedicated: gpu}");
    expect(out.stdout).toMatch(/huge +→ Pending/);
  });

  it("prints the same on a second run", async () => {
    const again = await runDemoToEnd("05-scheduler", [], {}, 55_000);
    expect(again.stdout).toBe(out.stdout);
  }, 60_000);
});
