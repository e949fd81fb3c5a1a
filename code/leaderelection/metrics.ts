/**
 * Leader-election metrics — `leader_election_master_status{name}` (1 while this process leads the
 * lease, 0 otherwise) and `leader_election_slowpath_total{name}`, with upstream's names and help.
 * Mirrors client-go tools/leaderelection/metrics.go (LeaderMetric, leaderOn/leaderOff,
 * slowpathExercised) and component-base's Prometheus provider for it.
 *
 * @upstream kubernetes/client-go tools/leaderelection/metrics.go (LeaderMetric, MetricsProvider, SetProvider, leaderMetricsAdapter)
 * @upstream kubernetes/component-base metrics/prometheus/clientgo/leaderelection/metrics.go (leaderGauge, leaderSlowpathCounter)
 * @chapter 06-leader-election
 *
 * Solves: "which replica leads?" from a dashboard: summing the gauge over replicas by `name` must
 * give 1 (0 for a while during a failover; 2 would be the overlap the chapter measures).
 *
 * Invariants:
 * - one pair of series per Registry however many electors report into it (two electors in one
 *   test process with one registry share the series, distinguished by `name`);
 * - an elector sets its gauge to 0 when it is made, 1 when it acquires, 0 when it stops leading.
 *
 * What upstream does differently: the provider is process-global (SetProvider, first call wins)
 * and the series live on component-base's legacy registry; ours is passed in per elector
 * (`metrics` in LeaderElectionConfig), like the scheduler's own registry (code/scheduler/metrics/).
 */
import { Counter, Gauge, type Registry } from "prom-client";

// #region leader-metric
/** LeaderMetric: what the elector reports. */
export interface LeaderMetric {
  on(name: string): void;
  off(name: string): void;
  slowpathExercised(name: string): void;
}

/** The default: report nothing (upstream's noopMetric). */
export const noopMetric: LeaderMetric = { on() {}, off() {}, slowpathExercised() {} };
// #endregion leader-metric

const byRegistry = new WeakMap<Registry, LeaderMetric>();

/** The leader-election series on `registry` (made on first use, then shared). */
export function leaderElectionMetrics(registry: Registry): LeaderMetric {
  const known = byRegistry.get(registry);
  if (known) return known;
  const gauge = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ["name"] as const,
    registers: [registry],
  });
  const slowpath = new Counter({
    name: "leader_election_slowpath_total",
    help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ["name"] as const,
    registers: [registry],
  });
  const metric: LeaderMetric = {
    on: (name) => gauge.set({ name }, 1),
    off: (name) => gauge.set({ name }, 0),
    slowpathExercised: (name) => slowpath.inc({ name }),
  };
  byRegistry.set(registry, metric);
  return metric;
}
