/**
 * The scheduler's series as Prometheus scrapes them: upstream's names, labels and buckets, the
 * pending gauge read from the queue at scrape time, and one registry per scheduler.
 */
import { describe, expect, it } from "vitest";
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
