/**
 * Scheduler metrics — the Prometheus series kube-scheduler serves on /metrics, with upstream's
 * names, help texts, labels and buckets, so a dashboard written for the real scheduler reads ours.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/metrics/metrics.go (scheduleAttempts, schedulingLatency, pendingPods, queueIncomingPods, FrameworkExtensionPointDuration, PluginExecutionDuration, PodScheduled, PodUnschedulable, PodScheduleError)
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
 * - the framework observes every run of an extension point (Filter and the PreFilter
 *   extensions excepted, as upstream: they run per node) and, in sampled cycles only
 *   (pluginMetricsSamplePercent = 10), every plugin call; `status` is the Code's name.
 *
 * What upstream does differently: it has ~25 more series (goroutines,
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

/**
 * What the framework runtime reports (framework.ts calls it): upstream's metricsRecorder for the
 * per-plugin series, and the extension-point histogram it observes directly.
 */
export interface FrameworkMetricsRecorder {
  observeExtensionPoint(
    extensionPoint: string,
    status: string,
    profile: string,
    durationSeconds: number,
  ): void;
  observePluginDuration(
    plugin: string,
    extensionPoint: string,
    status: string,
    durationSeconds: number,
  ): void;
}

/** pluginMetricsSamplePercent (schedule_one.go): the share of cycles whose plugin calls are timed. */
export const pluginMetricsSamplePercent = 10;

export interface PendingPodsSource {
  pendingPodsMetric(): { active: number; backoff: number; unschedulable: number; gated: number };
}

// #region metrics
export class SchedulerMetrics implements SchedulerMetricsRecorder, FrameworkMetricsRecorder {
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
  // Framework runtime (issue 14, interpod2): extension points and sampled plugin calls.
  readonly frameworkExtensionPointDuration = new Histogram({
    name: "scheduler_framework_extension_point_duration_seconds",
    help: "Latency for running all plugins of a specific extension point.",
    labelNames: ["extension_point", "status", "profile"] as const,
    // 0.1 ms doubling to ~200 ms (the last bucket is [~200ms, +Inf)).
    buckets: exponentialBuckets(0.0001, 2, 12),
    registers: [this.registry],
  });
  readonly pluginExecutionDuration = new Histogram({
    name: "scheduler_plugin_execution_duration_seconds",
    help: "Duration for running a plugin at a specific extension point.",
    labelNames: ["plugin", "extension_point", "status"] as const,
    // 0.01 ms × 1.5 per bucket to ~22 ms: fine steps, since a plugin's cost moves in small amounts.
    buckets: exponentialBuckets(0.00001, 1.5, 20),
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

  observeExtensionPoint(
    extensionPoint: string,
    status: string,
    profile: string,
    durationSeconds: number,
  ): void {
    this.frameworkExtensionPointDuration.observe(
      { extension_point: extensionPoint, status, profile },
      durationSeconds,
    );
  }

  observePluginDuration(
    plugin: string,
    extensionPoint: string,
    status: string,
    durationSeconds: number,
  ): void {
    this.pluginExecutionDuration.observe(
      { plugin, extension_point: extensionPoint, status },
      durationSeconds,
    );
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
