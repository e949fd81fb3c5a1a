/**
 * The scheduler's series as Prometheus scrapes them: upstream's names, labels and buckets, the
 * pending gauge read from the queue at scrape time, and one registry per scheduler.
 */
import { describe, expect, it } from "vitest";
import { newSim } from "../testing/sim.ts";
import { makeNode, makePod } from "../testing/wrappers.ts";
import { exponentialBuckets, SchedulerMetrics } from "./metrics.ts";

describe("SchedulerMetrics", () => {
  it("has upstream's attempt-duration buckets: 1 ms doubling 15 times (to 16.384 s)", () => {
    const b = exponentialBuckets(0.001, 2, 15);
    expect(b).toHaveLength(15);
    expect(b[0]).toBe(0.001);
    expect(b[14]).toBeCloseTo(16.384, 10);
  });

  it("counts attempts by result and profile, and observes their duration", async () => {
    const m = new SchedulerMetrics();
    m.observeAttempt("scheduled", "default-scheduler", 0.003);
    m.observeAttempt("scheduled", "default-scheduler", 0.0005);
    m.observeAttempt("unschedulable", "second", 2);
    const text = await m.text();
    expect(text).toContain("# TYPE scheduler_schedule_attempts_total counter");
    expect(text).toContain(
      'scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"} 2',
    );
    expect(text).toContain('scheduler_schedule_attempts_total{result="unschedulable",profile="second"} 1');
    // 0.0005 s falls in the first bucket (le 0.001); 0.003 s in le 0.004 and above.
    expect(text).toContain(
      'scheduler_scheduling_attempt_duration_seconds_bucket{le="0.001",result="scheduled",profile="default-scheduler"} 1',
    );
    expect(text).toContain(
      'scheduler_scheduling_attempt_duration_seconds_bucket{le="0.002",result="scheduled",profile="default-scheduler"} 1',
    );
    expect(text).toContain(
      'scheduler_scheduling_attempt_duration_seconds_bucket{le="0.004",result="scheduled",profile="default-scheduler"} 2',
    );
    expect(text).toContain(
      'scheduler_scheduling_attempt_duration_seconds_count{result="unschedulable",profile="second"} 1',
    );
  });

  it("reads the pending pods from the queue when scraped, by queue", async () => {
    let active = 3;
    const m = new SchedulerMetrics();
    m.bindQueue({ pendingPodsMetric: () => ({ active, backoff: 1, unschedulable: 2, gated: 4 }) });
    expect(await m.text()).toContain('scheduler_pending_pods{queue="active"} 3');
    active = 0;
    const text = await m.text();
    expect(text).toContain('scheduler_pending_pods{queue="active"} 0');
    expect(text).toContain('scheduler_pending_pods{queue="backoff"} 1');
    expect(text).toContain('scheduler_pending_pods{queue="unschedulable"} 2');
    expect(text).toContain('scheduler_pending_pods{queue="gated"} 4');
  });

  it("counts incoming pods by queue and event; two schedulers do not share a registry", async () => {
    const a = new SchedulerMetrics();
    const b = new SchedulerMetrics();
    a.queueIncomingPod("active", "PodAdd");
    a.queueIncomingPod("active", "PodAdd");
    a.queueIncomingPod("backoff", "NodeAdd");
    const text = await a.text();
    expect(text).toContain('scheduler_queue_incoming_pods_total{queue="active",event="PodAdd"} 2');
    expect(text).toContain('scheduler_queue_incoming_pods_total{queue="backoff",event="NodeAdd"} 1');
    expect(await b.text()).not.toContain('event="PodAdd"');
  });
});

describe("framework metrics after scheduling cycles", () => {
  it("every extension point is observed per cycle; plugin calls only in sampled cycles", async () => {
    const m = new SchedulerMetrics();
    // Sampling injected: the first cycle is timed plugin by plugin, the next two are not.
    const samples = [true, false, false];
    let t = 0;
    const sim = newSim({
      nodes: [
        makeNode("n1", { allocatable: { cpu: "1", memory: "1Gi", pods: "10" } }),
        makeNode("n2", { allocatable: { cpu: "1", memory: "1Gi", pods: "10" } }),
      ],
      frameworkMetrics: {
        metricsRecorder: m,
        metricsNow: () => (t += 0.00005),
        samplePluginMetrics: () => samples.shift() ?? false,
      },
    });
    sim.add(makePod("a", { requests: [{ cpu: "100m" }] }));
    sim.add(makePod("b", { requests: [{ cpu: "100m" }] }));
    // Fits nowhere (2 CPUs on 1-CPU nodes): Filter rejects both nodes, PostFilter cannot help.
    sim.add(makePod("huge", { requests: [{ cpu: "2" }] }));
    await sim.drain();
    expect(sim.bound.map((b) => b.pod.metadata.name).sort()).toEqual(["a", "b"]);
    const text = await m.text();
    const count = (series: string, labels: string) => {
      const line = text.split("\n").find((l) => l.startsWith(`${series}_count{${labels}}`));
      return line === undefined ? undefined : Number(line.split(" ").pop());
    };
    const ep = "scheduler_framework_extension_point_duration_seconds";
    const prof = 'profile="default-scheduler"';
    expect(text).toContain(`# TYPE ${ep} histogram`);
    // Three cycles reach PreFilter; the two that fit go on to PreScore…PostBind, "huge" to PostFilter.
    expect(count(ep, `extension_point="PreFilter",status="Success",${prof}`)).toBe(3);
    expect(count(ep, `extension_point="PostFilter",status="Unschedulable",${prof}`)).toBe(1);
    for (const point of ["PreScore", "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind"])
      expect(count(ep, `extension_point="${point}",status="Success",${prof}`), point).toBe(2);
    // Filter runs per node: upstream has no extension-point series for it.
    expect(text).not.toContain('extension_point="Filter",status="Success",profile');
    // 0.1 ms doubling: 12 buckets, the first 0.0001, then +Inf.
    expect(text).toContain(`${ep}_bucket{le="0.0001",extension_point="PreFilter",status="Success",${prof}}`);
    expect(text).toContain(`${ep}_bucket{le="0.2048",extension_point="PreFilter",status="Success",${prof}}`);

    const pl = "scheduler_plugin_execution_duration_seconds";
    expect(text).toContain(`# TYPE ${pl} histogram`);
    // Only the first cycle (pod "a", 2 nodes) was sampled: NodeResourcesFit's Filter ran twice,
    // its PreFilter and DefaultBinder's Bind once each.
    expect(count(pl, 'plugin="NodeResourcesFit",extension_point="Filter",status="Success"')).toBe(2);
    expect(count(pl, 'plugin="NodeResourcesFit",extension_point="PreFilter",status="Success"')).toBe(1);
    expect(count(pl, 'plugin="DefaultBinder",extension_point="Bind",status="Success"')).toBe(1);
    // "huge" was not sampled: no Unschedulable plugin call is on record.
    expect(text).not.toContain('extension_point="Filter",status="Unschedulable"');
  });
});
