import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { densitySaturationSeconds, extractors, num, part, sections } from "./bench-figures.ts";
import {
  type BenchEntry,
  benchmarkOrder,
  parseJsonLines,
  readResults,
  thisMachine,
  withEntry,
  writeResults,
} from "./bench-results.ts";

const entry = (name: string, result: unknown[]): BenchEntry => ({
  name,
  args: [],
  date: "2026-12-07T00:00:00.000Z",
  commit: "abc1234",
  machine: thisMachine(),
  loadAverage: { before: 0.1, after: 0.2 },
  seconds: 1,
  result,
});

describe("reading a benchmark's JSON", () => {
  it("finds numbers by path, array indexes included", () => {
    const r = { targets: [{ puts1: { putsPerSec: 10 } }, { puts1: { putsPerSec: 20 } }] };
    expect(num("store", r, "targets[1].puts1.putsPerSec")).toBe(20);
  });

  it("names the benchmark and the path when a field is missing or not a number", () => {
    expect(() => num("store", { targets: [] }, "targets[0].puts1.putsPerSec")).toThrow(
      'results of "store": no number at targets[0].puts1.putsPerSec',
    );
    expect(() => num("store", { a: "7" }, "a")).toThrow("no number at a");
    expect(() => num("store", { a: Number.NaN }, "a")).toThrow("no number at a");
  });

  it("tells a folder's benchmarks apart by a key of their own", () => {
    const all = [{ bundle: 1 }, { sloP99Ms: 5000 }];
    expect(part("kubelet", all, "sloP99Ms")).toBe(all[1]);
    expect(() => part("kubelet", all, "workloads")).toThrow('no object with "workloads" among the 2 printed');
  });

  it("rejects stdout that is not one JSON object a line", () => {
    expect(parseJsonLines("x", '{"a":1}\n\n{"b":2}\n')).toEqual([{ a: 1 }, { b: 2 }]);
    expect(() => parseJsonLines("x", "")).toThrow("x: printed no JSON on stdout");
    expect(() => parseJsonLines("x", '{"a":1}\nready\n')).toThrow(
      "x: line 2 of its stdout is not JSON: ready",
    );
  });
});

describe("the figures of each benchmark", () => {
  it("has figures defined for every benchmark `all` runs", () => {
    for (const name of benchmarkOrder) expect(extractors[name], name).toBeDefined();
  });

  it("puts ours beside etcd's figure from the same run", () => {
    const put = (perSec: number, p99: number) => ({ putsPerSec: perSec, p99Ms: p99 });
    const target = (a: number, b: number, p99: number, w: number) => ({
      puts1: put(a, 1),
      putsMany: put(b, p99),
      watch: { eventsPerSec: w },
    });
    const [s] = sections([
      entry("store", [{ targets: [target(250, 1200, 300, 38000), target(550, 1900, 120, 90000)] }]),
    ]);
    expect(s.figures.map((f) => [f.label, f.ours, f.reference.value, f.better])).toEqual([
      ["puts, 1 client", 250, 550, "higher"],
      ["puts, 64 clients", 1200, 1900, "higher"],
      ["put p99, 64 clients", 300, 120, "lower"],
      ["watch delivery, 100 watchers", 38000, 90000, "higher"],
    ]);
  });

  it("charts the watch index beside the same cacher with it off, when the API server's run has it", () => {
    const slo = { slo: [{ target: "secured", slo: "mutating", limitMs: 1000, p99Ms: 40 }] };
    const results = {
      cache: { creates: { one: { podsPerSec: 900 } } },
      etcd: { creates: { one: { podsPerSec: 700 } } },
    };
    const bind = { ceilingPodsPerSec: 300, createsAlone: { podsPerSec: 1000 } };
    const watchIndex = {
      sizes: { nodes: 1000 },
      indexed: { writesPerSec: 9000 },
      notIndexed: { writesPerSec: 150 },
    };
    const labels = (r: unknown[]) => sections([entry("apiserver", r)])[0].figures.map((f) => f.label);
    expect(labels([{ ...slo, results }, bind])).toHaveLength(3);
    const [s] = sections([entry("apiserver", [{ ...slo, results }, bind, { watchIndex }])]);
    const last = s.figures[s.figures.length - 1];
    expect([last.label, last.ours, last.reference.value, last.better]).toEqual([
      "pod writes, 1000 kubelet watches (spec.nodeName index)",
      9000,
      150,
      "higher",
    ]);
  });

  it("charts only the scheduler workloads upstream publishes a threshold for", () => {
    const w = (name: string, average: number, threshold: number | null) => ({
      name,
      threshold,
      throughput: { average },
    });
    const [s] = sections([
      entry("scheduler", [
        { workload: "SchedulingPodAntiAffinity/500Nodes", podsPerSec: 90 },
        {
          workloads: [
            w("SchedulingBasic/500Nodes", 100, null),
            w("SchedulingBasic/5000Nodes_10000Pods", 240, 270),
          ],
        },
      ]),
    ]);
    expect(s.figures).toEqual([
      {
        label: "SchedulingBasic/5000Nodes_10000Pods",
        unit: "pods/s",
        better: "higher",
        ours: 240,
        reference: { label: "upstream scheduler_perf threshold", value: 270 },
      },
    ]);
  });

  // The shape code/cmd/testing/cluster.bench.ts prints with --json (only the fields charted, and a
  // few it also prints), its numbers made up for the test.
  const summary = (p50: number, p90: number, p99: number) => ({ n: 100, p50, p90, p99, max: p99 + 1 });
  const startup = (pods: number, notRunning: number, s: ReturnType<typeof summary>) => ({
    pods,
    rate: 50,
    createSeconds: 2,
    notRunning,
    allRunningSeconds: 3,
    startup: s,
    cpuSeconds: { "kube-apiserver": 1 },
  });
  const clusterResult = (o: { notReady?: number; notRunning?: number; memory?: boolean } = {}) => ({
    sloP99Ms: 5000,
    upstreamMemoryMiB: { "kube-apiserver": 4000, "kube-scheduler": 750 },
    etcd: "ours (code/cmd/etcd.ts, in memory)",
    latency: {
      nodes: 100,
      loadBefore: [1, 1, 1],
      loadAfter: [2, 2, 2],
      small: startup(100, 0, summary(410, 620, 900)),
      large: startup(3000, o.notRunning ?? 0, summary(1500, 2600, 6100)),
      scaleUp: {
        replicas: 1000,
        notReady: o.notReady ?? 0,
        allPodsReadySeconds: o.notReady ? null : 41.5,
        deploymentReadySeconds: o.notReady ? null : 42.3,
        scaleToPodCreated: summary(1, 2, 3),
        podCreatedToReady: summary(700, 1800, 2400),
        scaleToPodReady: summary(1, 2, 3),
        cpuSeconds: {},
      },
      kubemarkExit: 0,
      pids: {},
    },
    ...(o.memory === false
      ? {}
      : {
          memory: {
            nodes: 1000,
            pods: 30000,
            withPods: {
              "kube-apiserver": { rssMiB: 1210, peakMiB: 1400 },
              etcd: { rssMiB: 300, peakMiB: 310 },
              "kube-scheduler": { rssMiB: 260, peakMiB: 280 },
            },
            withoutPods: {},
          },
        }),
  });

  it("says in the memory labels how many of the pods were not yet Running when memory was read", () => {
    const result = clusterResult() as { memory: Record<string, unknown> };
    result.memory.startup = { notRunning: 24086 };
    const [s] = sections([entry("cluster", [result])]);
    const labels = s.figures.map((f) => f.label).filter((l) => l.includes("resident memory"));
    expect(labels.length).toBeGreaterThan(0);
    for (const l of labels) expect(l).toMatch(/1000 nodes \/ 30000 pods, 24086 of them not yet Running$/);
  });

  it("charts the cluster's pod startup against the SLO, the scale-up against density's bound, memory against its limits", () => {
    const [s] = sections([entry("cluster", [clusterResult()])]);
    expect(s.figures.map((f) => [f.label, f.unit, f.ours, f.reference.label, f.reference.value])).toEqual([
      ["pod startup p50, 100 pods on 100 hollow nodes", "ms", 410, "upstream SLO: p99 ≤ 5 s", 5000],
      ["pod startup p90, 100 pods on 100 hollow nodes", "ms", 620, "upstream SLO: p99 ≤ 5 s", 5000],
      ["pod startup p99, 100 pods on 100 hollow nodes", "ms", 900, "upstream SLO: p99 ≤ 5 s", 5000],
      ["pod startup p50, 3000 pods on 100 hollow nodes", "ms", 1500, "upstream SLO: p99 ≤ 5 s", 5000],
      ["pod startup p90, 3000 pods on 100 hollow nodes", "ms", 2600, "upstream SLO: p99 ≤ 5 s", 5000],
      ["pod startup p99, 3000 pods on 100 hollow nodes", "ms", 6100, "upstream SLO: p99 ≤ 5 s", 5000],
      [
        "Deployment scale-up 0 → 1000: every pod Ready",
        "s",
        41.5,
        "density test's bound: max(2 min, pods ÷ 8/s)",
        125,
      ],
      ["Deployment scale-up 0 → 1000: pod created → Ready p99", "ms", 2400, "upstream SLO: p99 ≤ 5 s", 5000],
      [
        "kube-apiserver resident memory, 1000 nodes / 30000 pods",
        "MiB",
        1210,
        "density.go's kubemark limit (≤ 1,000 nodes)",
        4000,
      ],
      [
        "kube-scheduler resident memory, 1000 nodes / 30000 pods",
        "MiB",
        260,
        "density.go's kubemark limit (≤ 1,000 nodes)",
        750,
      ],
    ]);
    expect(s.figures.every((f) => f.better === "lower")).toBe(true);
  });

  it("says when a cluster run gave up (lower bounds), and charts only the parts it ran", () => {
    const [s] = sections([entry("cluster", [clusterResult({ notReady: 7, notRunning: 3, memory: false })])]);
    const labels = s.figures.map((f) => f.label);
    expect(labels).toContain("pod startup p99, 3000 pods on 100 hollow nodes, 3 never Running: lower bound");
    expect(labels).toContain(
      "Deployment scale-up 0 → 1000: pod created → Ready p99 (7 never Ready: lower bound)",
    );
    expect(labels.some((l) => l.includes("every pod Ready"))).toBe(false);
    expect(labels.some((l) => l.includes("memory"))).toBe(false);
  });

  it("names the field when the cluster's JSON lacks one it charts", () => {
    const r = clusterResult();
    const withPods = (r as { memory: { withPods: Record<string, unknown> } }).memory.withPods;
    delete withPods["kube-scheduler"];
    expect(() => sections([entry("cluster", [r])])).toThrow(
      'results of "cluster": no number at memory.withPods.kube-scheduler.rssMiB',
    );
  });

  it("bounds a saturation run as density.go did: two minutes, or 8 pods a second for more pods", () => {
    expect(densitySaturationSeconds(100)).toBe(120);
    expect(densitySaturationSeconds(960)).toBe(120);
    expect(densitySaturationSeconds(3000)).toBe(375);
  });

  it("refuses a results entry no figures are defined for", () => {
    expect(() => sections([entry("mystery", [{}])])).toThrow(
      'no figures are defined for benchmark "mystery"',
    );
  });
});

describe("the results file", () => {
  const dir = mkdtempSync(join(tmpdir(), "bench-results-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("replaces one benchmark's entry and keeps the others, in the course's order", () => {
    const file = join(dir, "results.json");
    let r = readResults(file);
    expect(r.entries).toEqual([]);
    r = withEntry(r, entry("kubelet", [{ run: 1 }]), benchmarkOrder);
    r = withEntry(r, entry("store", [{ run: 1 }]), benchmarkOrder);
    r = withEntry(r, entry("kubelet", [{ run: 2 }]), benchmarkOrder);
    writeResults(r, file);
    const back = readResults(file);
    expect(back.entries.map((e) => [e.name, e.result])).toEqual([
      ["store", [{ run: 1 }]],
      ["kubelet", [{ run: 2 }]],
    ]);
    expect(JSON.parse(readFileSync(file, "utf8")).version).toBe(1);
  });
});
