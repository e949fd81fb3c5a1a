/**
 * scheduler_perf's workloads, as data — the node and pod templates and the five workloads the
 * scheduler benchmark (scheduler-perf.bench.ts) runs, with upstream's names, counts and the
 * published SchedulingThroughput thresholds they are printed beside.
 *
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/misc/performance-config.yaml (SchedulingBasic, PreemptionBasic)
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/topology_spreading/performance-config.yaml (TopologySpreading)
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/affinity/performance-config.yaml (SchedulingPodAntiAffinity)
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/templates/ (node-default.yaml, pod-default.yaml, pod-low-priority.yaml, pod-high-priority.yaml, pod-with-topology-spreading.yaml, pod-with-pod-anti-affinity.yaml)
 * @chapter 05-scheduler
 *
 * Solves: a workload is "create N nodes from a template, create the initial pods and wait until
 * they are scheduled, then create the measured pods and sample how fast they are scheduled" —
 * upstream writes it as YAML opcodes (createNodes, createPods with collectMetrics); here each
 * is one record, so the benchmark and its test read the same table.
 *
 * Invariants:
 * - a template returns a fresh object per call (the writer sends thousands; none is shared);
 * - counts are upstream's; `--scale` shrinks them all alike (at least 1), so a small run keeps
 *   each workload's shape (PreemptionBasic: four low-priority pods per node, which fill it);
 * - `threshold` is the average pods/s upstream's CI requires (compareMetricWithThreshold reads
 *   the SchedulingThroughput "Average"); undefined where upstream publishes none.
 */
import type { Node, Pod } from "../../api/core.ts";

// #region templates
/** node-default.yaml: 4 CPU, 32Gi, 110 pods, Ready. Upstream sets capacity only; allocatable = capacity here. */
export function nodeDefault(name: string, labels: Record<string, string> = {}): Node {
  const capacity = { pods: "110", cpu: "4", memory: "32Gi" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { "kubernetes.io/hostname": name, ...labels } },
    spec: {},
    status: {
      capacity,
      allocatable: { ...capacity },
      conditions: [{ type: "Ready", status: "True" }],
      phase: "Running",
    },
  } as Node;
}

/** The one pause container of every template: port 80, requests = limits. */
function pause(cpu: string): Pod["spec"]["containers"][number] {
  return {
    name: "pause",
    image: "registry.k8s.io/pause:3.10",
    ports: [{ containerPort: 80 }],
    resources: { limits: { cpu, memory: "500Mi" }, requests: { cpu, memory: "500Mi" } },
  };
}

function pod(
  name: string,
  namespace: string,
  spec: Partial<Pod["spec"]>,
  labels?: Record<string, string>,
): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, ...(labels ? { labels } : {}) },
    spec: { containers: [pause("100m")], ...spec },
  } as Pod;
}

export type TemplateName =
  | "default"
  | "low-priority"
  | "high-priority"
  | "topology-spreading"
  | "anti-affinity";

/** The pod templates by name (the writer child gets the name on its command line). */
export const podTemplates: Record<TemplateName, (name: string, namespace: string) => Pod> = {
  // pod-default.yaml: 100m CPU, 500Mi.
  default: (name, ns) => pod(name, ns, {}),
  // pod-low-priority.yaml: 900m, priority unset (0), terminationGracePeriodSeconds 0 — four fill a node (3.6 of 4 CPU).
  "low-priority": (name, ns) =>
    pod(name, ns, { terminationGracePeriodSeconds: 0, containers: [pause("900m")] }),
  // pod-high-priority.yaml: 3 CPU at priority 10 — fits only once three of a node's four low pods are gone.
  "high-priority": (name, ns) => pod(name, ns, { priority: 10, containers: [pause("3000m")] }),
  // pod-with-topology-spreading.yaml: maxSkew 5 over zones, DoNotSchedule, among color=blue.
  "topology-spreading": (name, ns) =>
    pod(
      name,
      ns,
      {
        topologySpreadConstraints: [
          {
            maxSkew: 5,
            topologyKey: "topology.kubernetes.io/zone",
            whenUnsatisfiable: "DoNotSchedule",
            labelSelector: { matchLabels: { color: "blue" } },
          },
        ],
      },
      { color: "blue" },
    ),
  // pod-with-pod-anti-affinity.yaml: required anti-affinity to color=green per hostname, across sched-0 and sched-1.
  "anti-affinity": (name, ns) =>
    pod(
      name,
      ns,
      {
        affinity: {
          podAntiAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: [
              {
                labelSelector: { matchLabels: { color: "green" } },
                topologyKey: "kubernetes.io/hostname",
                namespaces: ["sched-1", "sched-0"],
              },
            ],
          },
        },
      },
      { color: "green" },
    ),
};
// #endregion templates

// #region workloads
export interface Workload {
  /** `TestCase/Workload`, as upstream names its sub-benchmarks. */
  name: string;
  nodes: number;
  /** labelNodePrepareStrategy: this label, its values given to the nodes in turn. */
  nodeLabel?: { key: string; values: string[] };
  init: { count: number; template: TemplateName; namespace: string };
  measure: { count: number; template: TemplateName; namespace: string };
  /** Upstream's published threshold (average pods/s), and where it comes from. */
  threshold?: number;
  thresholdNote: string;
}

export const workloads: Workload[] = [
  {
    name: "SchedulingBasic/500Nodes",
    nodes: 500,
    init: { count: 500, template: "default", namespace: "namespace-1" },
    measure: { count: 1000, template: "default", namespace: "namespace-2" },
    thresholdNote: "upstream publishes no threshold for 500Nodes",
  },
  {
    name: "SchedulingBasic/5000Nodes_10000Pods",
    nodes: 5000,
    init: { count: 1000, template: "default", namespace: "namespace-1" },
    measure: { count: 10000, template: "default", namespace: "namespace-2" },
    threshold: 270,
    thresholdNote: "issue 14's figure for 1.32 (the current config says 680)",
  },
  {
    name: "TopologySpreading/5000Nodes",
    nodes: 5000,
    nodeLabel: { key: "topology.kubernetes.io/zone", values: ["moon-1", "moon-2", "moon-3"] },
    init: { count: 5000, template: "default", namespace: "namespace-1" },
    measure: { count: 2000, template: "topology-spreading", namespace: "namespace-2" },
    threshold: 85,
    thresholdNote: "issue 14's figure for 1.32 (the current config sets 460 on 5000Nodes_5000Pods)",
  },
  {
    name: "PreemptionBasic/500Nodes",
    nodes: 500,
    init: { count: 2000, template: "low-priority", namespace: "namespace-1" },
    measure: { count: 500, template: "high-priority", namespace: "namespace-2" },
    threshold: 18,
    thresholdNote: "issue 14's figure for 1.32 (the current config has no 500Nodes case)",
  },
  {
    name: "SchedulingPodAntiAffinity/5000Nodes",
    nodes: 5000,
    init: { count: 1000, template: "anti-affinity", namespace: "sched-0" },
    measure: { count: 1000, template: "anti-affinity", namespace: "sched-1" },
    threshold: 60,
    thresholdNote: "upstream's threshold on 5000Nodes_2000Pods (same nodes and initial pods, 2,000 measured)",
  },
];
// #endregion workloads

/** Every count times `scale`, rounded, at least 1 (the shape stays: ratios between counts hold). */
export function scaled(w: Workload, scale: number): Workload {
  const s = (n: number) => Math.max(1, Math.round(n * scale));
  return {
    ...w,
    nodes: s(w.nodes),
    init: { ...w.init, count: s(w.init.count) },
    measure: { ...w.measure, count: s(w.measure.count) },
  };
}

/**
 * SchedulingThroughput's summary of the per-window rates: the average, and percentiles as
 * upstream picks them — sorted ascending, the element at ceil(n·p/100) − 1.
 */
export function throughputSummary(samples: readonly number[]): {
  average: number;
  p50: number;
  p90: number;
  p99: number;
} {
  const s = [...samples].sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return { average: 0, p50: 0, p90: 0, p99: 0 };
  const at = (p: number) => s[Math.ceil((n * p) / 100) - 1];
  return { average: s.reduce((a, b) => a + b, 0) / n, p50: at(50), p90: at(90), p99: at(99) };
}
