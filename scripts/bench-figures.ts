/**
 * From each benchmark's JSON (docs/performance/results.json) to the figures the performance page
 * charts: every figure of ours beside the figure it is compared with — a real etcd or
 * @kubernetes/client-node measured in the same run, or an upstream SLO or threshold.
 * No upstream counterpart: upstream's perf-dash reads ClusterLoader2's result files the same way.
 *
 * Solves: each benchmark prints its own JSON shape (the one its chapter needs); the page needs one
 * shape. One small function a benchmark reads the fields it charts, by path, and a missing field
 * is an error naming the benchmark and the path — a renamed field cannot silently empty a chart.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import type { BenchEntry } from "./bench-results.ts";

/** One bar pair: ours, and what it is measured against. */
export interface Figure {
  label: string;
  unit: string;
  ours: number;
  reference: { label: string; value: number };
  /** Which way is better: a rate higher, a latency lower. */
  better: "higher" | "lower";
}

export interface Section {
  name: string;
  figures: Figure[];
  /** When and where the figures were measured. */
  date: string;
  commit: string;
  machine: BenchEntry["machine"];
  loadAverage: BenchEntry["loadAverage"];
  args: string[];
}

/** The number at `path` (dots; `[n]` for an array index) in `value`, or an error that names both. */
export function num(bench: string, value: unknown, path: string): number {
  let at: unknown = value;
  for (const part of path.split(".")) {
    const m = /^(.*?)\[(\d+)\]$/.exec(part);
    const key = m ? m[1] : part;
    if (key !== "") at = (at as Record<string, unknown> | undefined)?.[key];
    if (m) at = (at as unknown[] | undefined)?.[Number(m[2])];
  }
  if (typeof at !== "number" || !Number.isFinite(at))
    throw new Error(
      `results of "${bench}": no number at ${path} (found ${JSON.stringify(at)?.slice(0, 60)})`,
    );
  return at;
}

const round = (n: number) => (Math.abs(n) >= 100 ? Math.round(n) : Math.round(n * 100) / 100);

function fig(
  label: string,
  unit: string,
  better: Figure["better"],
  ours: number,
  refLabel: string,
  ref: number,
): Figure {
  return { label, unit, better, ours: round(ours), reference: { label: refLabel, value: round(ref) } };
}

type Extract = (r: unknown[], n: (value: unknown, path: string) => number) => Figure[];

/**
 * The object, among those a benchmark run printed (a folder's benchmarks each print one), that
 * has `key` — how each half is told apart.
 */
export function part(bench: string, results: unknown[], key: string): Record<string, unknown> {
  const found = results.find((r) => typeof r === "object" && r !== null && key in r);
  if (!found)
    throw new Error(`results of "${bench}": no object with "${key}" among the ${results.length} printed`);
  return found as Record<string, unknown>;
}
const optionalPart = (results: unknown[], key: string) =>
  results.find((r) => typeof r === "object" && r !== null && key in r) as Record<string, unknown> | undefined;

/** The figures of each benchmark, by name; the page shows them in `benchmarkOrder`. */
export const extractors: Record<string, Extract> = {
  store: (all, n) => {
    const r = part("store", all, "targets");
    const etcd = "the real etcd, same machine, same run";
    const t = (i: number, path: string) => n(r, `targets[${i}].${path}`);
    return [
      fig("puts, 1 client", "puts/s", "higher", t(0, "puts1.putsPerSec"), etcd, t(1, "puts1.putsPerSec")),
      fig(
        "puts, 64 clients",
        "puts/s",
        "higher",
        t(0, "putsMany.putsPerSec"),
        etcd,
        t(1, "putsMany.putsPerSec"),
      ),
      fig("put p99, 64 clients", "ms", "lower", t(0, "putsMany.p99Ms"), etcd, t(1, "putsMany.p99Ms")),
      fig(
        "watch delivery, 100 watchers",
        "events/s",
        "higher",
        t(0, "watch.eventsPerSec"),
        etcd,
        t(1, "watch.eventsPerSec"),
      ),
    ];
  },
  apiserver: (all, n) => {
    const r = part("apiserver", all, "slo");
    const b = part("apiserver", all, "ceilingPodsPerSec");
    // The watch-index half (watch-index.bench.ts) is newer than some results files: charted when present.
    const wi = optionalPart(all, "watchIndex");
    const slo = (r as { slo: { target: string; slo: string; limitMs: number; p99Ms: number }[] }).slo ?? [];
    const secured = slo.filter((s) => s.target === "secured");
    if (secured.length === 0) throw new Error(`results of "apiserver": no SLO checks of the secured target`);
    return [
      fig(
        "create pods, 1 client: over our store vs over etcd",
        "pods/s",
        "higher",
        n(r, "results.cache.creates.one.podsPerSec"),
        "the same API server over the real etcd",
        n(r, "results.etcd.creates.one.podsPerSec"),
      ),
      ...secured.map((s) =>
        fig(`${s.slo} (secured server)`, "ms p99", "lower", s.p99Ms, "upstream SLO", s.limitMs),
      ),
      fig(
        "create + bind (a scheduler's ceiling through this server)",
        "pods/s",
        "higher",
        n(b, "ceilingPodsPerSec"),
        "creates alone, same server",
        n(b, "createsAlone.podsPerSec"),
      ),
      ...(wi
        ? [
            fig(
              `pod writes, ${n(wi, "watchIndex.sizes.nodes")} kubelet watches (spec.nodeName index)`,
              "writes/s",
              "higher",
              n(wi, "watchIndex.indexed.writesPerSec"),
              "same cacher, index off (every watch tests every event)",
              n(wi, "watchIndex.notIndexed.writesPerSec"),
            ),
          ]
        : []),
    ];
  },
  informer: (all, n) => {
    const r = part("informer", all, "theirs");
    const rs = optionalPart(all, "runs");
    const peer = "@kubernetes/client-node, same run";
    const figures = [
      fig("initial sync", "ms", "lower", n(r, "ours.syncMs"), peer, n(r, "theirs.syncMs")),
      fig("events to 3 handlers", "events/s", "higher", n(r, "ours.perSec"), peer, n(r, "theirs.perSec")),
      fig(
        "heap per cached pod",
        "bytes",
        "lower",
        n(r, "ours.bytesPerObject"),
        peer,
        n(r, "theirs.bytesPerObject"),
      ),
    ];
    if (rs)
      figures.push(
        fig(
          "ReplicaSet controller: all pods created (client-go QPS 20 / burst 30)",
          "ms",
          "lower",
          n(rs, "runs[0].podsMs"),
          "the client's QPS floor",
          n(rs, "runs[0].minimumFloorMs"),
        ),
      );
    return figures;
  },
  // The InterPodAffinity benchmark (the other half of `scheduler`) is a profiling aid: its
  // figure has no reference of its own, so it is not charted.
  scheduler: (all, n) => {
    const r = part("scheduler", all, "workloads");
    const workloads = (r as { workloads: { name: string; threshold: number | null }[] }).workloads ?? [];
    return workloads.flatMap((w, i) =>
      w.threshold === null
        ? []
        : [
            fig(
              w.name,
              "pods/s",
              "higher",
              n(r, `workloads[${i}].throughput.average`),
              "upstream scheduler_perf threshold",
              w.threshold,
            ),
          ],
    );
  },
  leaderelection: (all, n) => {
    const r = part("leaderelection", all, "sets");
    const sets = (r as { sets: unknown[] }).sets ?? [];
    return sets.flatMap((_, i) => {
      const d = (k: string) => n(r, `sets[${i}].durations.${k}`) / 1000;
      const name = `${d("leaseDuration")}/${d("renewDeadline")}/${d("retryPeriod")} s`;
      return [
        fig(
          `failover p99 (${name})`,
          "ms",
          "lower",
          n(r, `sets[${i}].p99Ms`),
          "upstream's bound",
          n(r, `sets[${i}].bound.upper`),
        ),
        fig(
          `idle leader writes (${name})`,
          "writes/s",
          "lower",
          n(r, `sets[${i}].idle.leader.writesPerSec`),
          "one renewal per retry period",
          n(r, `sets[${i}].idle.expected.leaderWritesPerSec`),
        ),
      ];
    });
  },
  kubelet: (all, n) => {
    const start = part("kubelet", all, "bundle");
    const r = part("kubelet", all, "sloP99Ms");
    const parts = ["process", "fake"].filter((p) => r[p] !== undefined);
    return [
      ...parts.map((p) =>
        fig(
          `pod startup p99, ${p} runtime (${n(r, `${p}.pods`)} pods, ${n(r, `${p}.nodes`)} kubelets)`,
          "ms",
          "lower",
          n(r, `${p}.startup.p99`),
          "upstream SLO",
          n(r, "sloP99Ms"),
        ),
      ),
      ...processStart(start, n),
    ];
  },
  cluster: (all, n) => clusterFigures(part("cluster", all, "upstreamMemoryMiB"), n),
};

// #region cluster-figures
/**
 * test/e2e/scalability/density.go (gone from kubernetes/kubernetes since; ClusterLoader2 took its
 * place): all pods of a saturation run Running within max(MinSaturationThreshold = 2 min,
 * pods ÷ MinPodsPerSecondThroughput = 8 pods/s).
 */
export function densitySaturationSeconds(pods: number): number {
  return Math.max(120, Math.floor(pods / 8));
}

/**
 * code/cmd/testing/cluster.bench.ts's JSON: pod startup (p50, p90, p99 at its small and large pod
 * counts) against the SLO it printed (sig-scalability's pod_startup_latency.md: p99 ≤ 5 s for
 * stateless pods, image pulls excluded); the Deployment scale-up against density's saturation
 * bound and, per pod, against the same SLO; resident memory of each component that upstream
 * gives a limit for (the limits it printed, density.go's kubemark constraints). A part the run
 * did not measure (`--only`) has no figures; one that gave up says so in its labels (its
 * figures are lower bounds).
 */
function clusterFigures(r: Record<string, unknown>, n: (value: unknown, path: string) => number): Figure[] {
  const figures: Figure[] = [];
  const slo = n(r, "sloP99Ms");
  const sloLabel = `upstream SLO: p99 ≤ ${slo / 1000} s`;
  const has = (path: string) => {
    let at: unknown = r;
    for (const k of path.split(".")) at = (at as Record<string, unknown> | undefined)?.[k];
    return at !== undefined && at !== null;
  };
  for (const size of ["small", "large"]) {
    if (!has(`latency.${size}`)) continue;
    const at = `latency.${size}`;
    const short =
      n(r, `${at}.notRunning`) > 0 ? `, ${n(r, `${at}.notRunning`)} never Running: lower bound` : "";
    const where = `${n(r, `${at}.pods`)} pods on ${n(r, "latency.nodes")} hollow nodes${short}`;
    for (const q of ["p50", "p90", "p99"])
      figures.push(
        fig(`pod startup ${q}, ${where}`, "ms", "lower", n(r, `${at}.startup.${q}`), sloLabel, slo),
      );
  }
  if (has("latency.scaleUp")) {
    const replicas = n(r, "latency.scaleUp.replicas");
    const notReady = n(r, "latency.scaleUp.notReady");
    const name = `Deployment scale-up 0 → ${replicas}`;
    if (notReady === 0)
      figures.push(
        fig(
          `${name}: every pod Ready`,
          "s",
          "lower",
          n(r, "latency.scaleUp.allPodsReadySeconds"),
          "density test's bound: max(2 min, pods ÷ 8/s)",
          densitySaturationSeconds(replicas),
        ),
      );
    const short = notReady > 0 ? ` (${notReady} never Ready: lower bound)` : "";
    figures.push(
      fig(
        `${name}: pod created → Ready p99${short}`,
        "ms",
        "lower",
        n(r, "latency.scaleUp.podCreatedToReady.p99"),
        sloLabel,
        slo,
      ),
    );
  }
  if (has("memory")) {
    const limits = (r.upstreamMemoryMiB ?? {}) as Record<string, unknown>;
    // The pods all exist (the API server and etcd hold them) even when the kubelets could not run
    // them all before the benchmark gave up: the label says how many were not yet Running.
    const notRunning = has("memory.startup.notRunning") ? n(r, "memory.startup.notRunning") : 0;
    const behind = notRunning > 0 ? `, ${notRunning} of them not yet Running` : "";
    const shape = `${n(r, "memory.nodes")} nodes / ${n(r, "memory.pods")} pods${behind}`;
    for (const name of Object.keys(limits))
      figures.push(
        fig(
          `${name} resident memory, ${shape}`,
          "MiB",
          "lower",
          n(r, `memory.withPods.${name}.rssMiB`),
          "density.go's kubemark limit (≤ 1,000 nodes)",
          n(r, `upstreamMemoryMiB.${name}`),
        ),
      );
  }
  return figures;
}
// #endregion cluster-figures

function processStart(r: unknown, n: (value: unknown, path: string) => number): Figure[] {
  return [
    fig(
      "container process start, bundled image",
      "ms p50",
      "lower",
      n(r, "bundle.startMs.p50"),
      "the same program through tsx",
      n(r, "tsx.startMs.p50"),
    ),
    fig(
      "container process start, warm pool",
      "ms p50",
      "lower",
      n(r, "warm.startMs.p50"),
      "bundled, cold",
      n(r, "bundle.startMs.p50"),
    ),
  ];
}

/** The page's sections, in the course's order; a benchmark with no extractor is an error. */
export function sections(entries: BenchEntry[]): Section[] {
  return entries.map((e) => {
    const extract = extractors[e.name];
    if (!extract)
      throw new Error(
        `results file: no figures are defined for benchmark "${e.name}" (scripts/bench-figures.ts)`,
      );
    return {
      name: e.name,
      figures: extract(e.result, (value, path) => num(e.name, value, path)),
      date: e.date,
      commit: e.commit,
      machine: e.machine,
      loadAverage: e.loadAverage,
      args: e.args,
    };
  });
}
