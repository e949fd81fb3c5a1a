// The scheduler benchmark in a small size: two of scheduler_perf's workloads at a tenth of their
// counts (SchedulingBasic/500Nodes: 50 nodes, 50 + 100 pods; PreemptionBasic/500Nodes: 50 nodes,
// 200 low-priority pods filling them, 50 high-priority pods that each need three victims), with
// the ceiling at 30 pods. It checks the shape of `--json`, that every measured pod was bound,
// that preemption really deleted victims (3 per preemptor), and that no watch was closed and no
// informer relisted. Never timings: performance is measured by `npm run bench -- scheduler`.
// The summary's percentile rule is checked by hand against upstream's (sorted, ceil(n·p/100) − 1).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runScriptToEnd } from "../../testing/child-process.ts";
import { scaled, throughputSummary, workloads } from "./scheduler-perf-workloads.ts";

const bench = join(repoRoot, "code", "scheduler", "testing", "scheduler-perf.bench.ts");

describe("SchedulingThroughput's summary", () => {
  it("averages the windows and picks percentiles as upstream (sorted, index ceil(n·p/100) − 1)", () => {
    // 10 windows: sorted 1..10; p50 → ceil(5) − 1 = index 4 → 5; p90 → ceil(9) − 1 = 8 → 9;
    // p99 → ceil(9.9) − 1 = 9 → 10; average 55 / 10 = 5.5.
    expect(throughputSummary([10, 3, 1, 7, 2, 9, 4, 8, 6, 5])).toEqual({
      average: 5.5,
      p50: 5,
      p90: 9,
      p99: 10,
    });
    // 3 windows: p50 → ceil(1.5) − 1 = 1 → 20; p90, p99 → ceil(2.7 | 2.97) − 1 = 2 → 30.
    expect(throughputSummary([30, 10, 20])).toEqual({ average: 20, p50: 20, p90: 30, p99: 30 });
    expect(throughputSummary([])).toEqual({ average: 0, p50: 0, p90: 0, p99: 0 });
  });

  it("scales every count alike and keeps PreemptionBasic's four low-priority pods per node", () => {
    const p = scaled(workloads.find((w) => w.name === "PreemptionBasic/500Nodes")!, 0.1);
    expect([p.nodes, p.init.count, p.measure.count]).toEqual([50, 200, 50]);
    expect(scaled(workloads[0], 0.0001).nodes).toBe(1);
  });
});

describe("scheduler benchmark (small)", () => {
  it("binds every measured pod, preempts for real, and closes no watch", async () => {
    const r = await runScriptToEnd(bench, [
      "--workloads=SchedulingBasic/500Nodes,PreemptionBasic",
      "--scale",
      "0.1",
      "--ceiling-pods",
      "30",
      "--clients",
      "8",
      "--json",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.scale).toBe(0.1);
    expect(out.workloads.map((w: { name: string }) => w.name)).toEqual([
      "SchedulingBasic/500Nodes",
      "PreemptionBasic/500Nodes",
    ]);
    const [basic, preemption] = out.workloads;
    expect(basic).toMatchObject({
      nodes: 50,
      initPods: 50,
      measuredPods: 100,
      measuredBound: 100,
      allBound: true,
    });
    expect(basic.threshold).toBeNull();
    expect(preemption).toMatchObject({
      nodes: 50,
      initPods: 200,
      measuredPods: 50,
      measuredBound: 50,
      allBound: true,
    });
    expect(preemption.threshold).toBe(18);
    // 3 CPU asked on a 4-CPU node holding four 900m pods: three of them must go, per preemptor.
    expect(preemption.victimsDeleted).toBe(150);
    for (const w of out.workloads) {
      expect(w.watchesClosedByServer, w.name).toBe(0);
      expect(w.informerRelists, w.name).toBe(0);
      expect(w.throughput.windows, w.name).toBeGreaterThan(0);
      expect(w.throughput.average, w.name).toBeGreaterThan(0);
      expect(Object.keys(w.throughput).sort()).toEqual(["average", "p50", "p90", "p99", "windows"]);
      expect(w.error, w.name).toBeUndefined();
      // CPU per measured pod, both processes: positive and finite (the scheduler does work per pod).
      expect(w.cpuMsPerPod.scheduler, w.name).toBeGreaterThan(0);
      expect(Number.isFinite(w.cpuMsPerPod.apiserver), w.name).toBe(true);
    }
    expect(preemption.ratio).toBeCloseTo(preemption.throughput.average / 18, 1);
    expect(out.ceiling).toMatchObject({ pods: 30, watchesClosedByServer: 0 });
    expect(out.ceiling.podsPerSec).toBeGreaterThan(0);
    expect(out.loadAverage).toEqual({ before: expect.any(Number), after: expect.any(Number) });
    expect(r.stderr).toMatch(/measured pods scheduled/);
  }, 300_000);

  it("names the workloads when asked for one it does not have (exit 2)", async () => {
    const r = await runScriptToEnd(bench, ["--workloads=NoSuchWorkload", "--json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown workload NoSuchWorkload; workloads: SchedulingBasic\/500Nodes/);
  }, 60_000);
});
