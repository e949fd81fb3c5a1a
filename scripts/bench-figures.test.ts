import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { extractors, num, part, sections } from "./bench-figures.ts";
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
  it("has figures defined for every benchmark `all` runs but the cluster's (charted once it is measured)", () => {
    for (const name of benchmarkOrder.filter((n) => n !== "cluster"))
      expect(extractors[name], name).toBeDefined();
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
