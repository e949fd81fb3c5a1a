/**
 * Scheduler metrics — the Prometheus series kube-scheduler serves on /metrics, with upstream's
 * names, help texts, labels and buckets, so a dashboard written for the real scheduler reads ours.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/metrics/metrics.go (scheduleAttempts, schedulingLatency, pendingPods, queueIncomingPods, FrameworkExtensionPointDuration, PodScheduled, PodUnschedulable, PodScheduleError)
 * @chapter 05-scheduler
 *
 * Solves: "is the scheduler keeping up?" is answered by three numbers — attempts by result,
 * how long an attempt takes, and how many pods wait in which queue. A counter per result and a
 * histogram per attempt answer the first two; the pending gauge reads the queue when scraped,
 * so it can never drift from the queue's real length.
 *
 * Invariants:
 * - one Registry per scheduler (not prom-client's global one): two schedulers in one test
 *   process do not share counters.
 * - `result` is one of scheduled, unschedulable, error (upstream's three); `queue` of the
 *   pending gauge is one of active, backoff, unschedulable, gated.
 *
 * What upstream does differently: it has ~30 more series (per-plugin durations, goroutines,
 * event-handling latency, preemption victims), registered on the component-base legacy registry
 * and gated by stability levels.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** prometheus.ExponentialBuckets(start, factor, count). */
export const exponentialBuckets = (start: number, factor: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => start * factor ** i);

export type AttemptResult = "scheduled" | "unschedulable" | "error";

/** What the scheduling loop reports (schedule-one.ts calls it; absent in simulations). */
export interface SchedulerMetricsRecorder {
  observeAttempt(result: AttemptResult, profile: string, durationSeconds: number): void;
  queueIncomingPod?(queue: string, event: string): void;
}

export interface PendingPodsSource {
  pendingPodsMetric(): { active: number; backoff: number; unschedulable: number; gated: number };
}

// #region metrics
export class SchedulerMetrics implements SchedulerMetricsRecorder {
  readonly registry = new Registry();
  readonly scheduleAttempts = new Counter({
    name: "scheduler_schedule_attempts_total",
    help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
    labelNames: ["result", "profile"] as const,
    registers: [this.registry],
  });
  readonly schedulingAttemptDuration = new Histogram({
    name: "scheduler_scheduling_attempt_duration_seconds",
    help: "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
    labelNames: ["result", "profile"] as const,
    buckets: exponentialBuckets(0.001, 2, 15),
    registers: [this.registry],
  });
  readonly queueIncomingPods = new Counter({
    name: "scheduler_queue_incoming_pods_total",
    help: "Number of pods added to scheduling queues by event and queue type.",
    labelNames: ["queue", "event"] as const,
    registers: [this.registry],
  });
  readonly pendingPods: Gauge<"queue">;
  private queue?: PendingPodsSource;

  /** `queue`: read when /metrics is scraped (or given later, by bindQueue). */
  constructor(queue?: PendingPodsSource) {
    this.queue = queue;
    const self = this;
    this.pendingPods = new Gauge({
      name: "scheduler_pending_pods",
      help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
      labelNames: ["queue"] as const,
      registers: [this.registry],
      collect() {
        if (!self.queue) return;
        const m = self.queue.pendingPodsMetric();
        for (const [q, n] of Object.entries(m)) this.set({ queue: q }, n);
      },
    });
  }

  /** The queue is built after the metrics (its hook counts incoming pods into them). */
  bindQueue(queue: PendingPodsSource): void {
    this.queue = queue;
  }

  observeAttempt(result: AttemptResult, profile: string, durationSeconds: number): void {
    this.scheduleAttempts.inc({ result, profile });
    this.schedulingAttemptDuration.observe({ result, profile }, durationSeconds);
  }

  queueIncomingPod(queue: string, event: string): void {
    this.queueIncomingPods.inc({ queue, event });
  }

  /** The text exposition format, as /metrics serves it. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  contentType(): string {
    return this.registry.contentType;
  }
}
// #endregion metrics
