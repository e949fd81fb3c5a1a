/**
 * The course's benchmark results file — docs/performance/results.json — which the performance
 * page (docs/performance.md) draws its charts from, and which `npm run bench -- all --json`
 * writes anew.
 * No upstream counterpart: upstream publishes its scalability results on perf-dash
 * (kubernetes/perf-tests perfdash), from runs of ClusterLoader2 on 100- to 5,000-node clusters.
 *
 * Solves:
 * - a figure on the page must come from a run, not from a sentence someone typed: each entry is
 *   a benchmark's own `--json` object, kept whole, with the machine, the date, the commit and the
 *   load average of the run that printed it;
 * - refreshing one benchmark (`--only kubelet`) keeps the others' entries, each with its own
 *   date, so the page can say when every figure was measured.
 *
 * Invariants:
 * - an entry's `result` is exactly what the benchmark printed (parsed), never edited;
 * - the file is rewritten whole, through a temporary file and a rename: an interrupted run leaves
 *   the previous file.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { cpus, loadavg, platform, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { root } from "./course.ts";

export const resultsFile = join(root, "docs", "performance", "results.json");

/**
 * What `all` runs, in this order (the course's order: the store first, the whole cluster last):
 * each component's folder — every benchmark in it — with its default sizes, the figures the
 * chapters quote.
 */
export const benchmarkOrder = [
  "store",
  "apiserver",
  "informer",
  "scheduler",
  "leaderelection",
  "kubelet",
  "cluster",
] as const;

/** The machine a run happened on, as the page prints it. */
export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  /** `etcd --version`'s version, when the real etcd is on PATH: the store and API server compare with it. */
  etcd?: string;
}

export interface BenchEntry {
  /** The benchmark's name (`npm run bench -- <name>`). */
  name: string;
  /** The flags it ran with (after `--json`). */
  args: string[];
  /** RFC 3339, when the run finished. */
  date: string;
  commit: string;
  machine: Machine;
  /** Load average (1 min) before and after: a figure from a busy machine says so. */
  loadAverage: { before: number; after: number };
  seconds: number;
  /** Each JSON object the benchmark printed on stdout, in order (a benchmark with halves prints two). */
  result: unknown[];
}

export interface Results {
  version: 1;
  entries: BenchEntry[];
}

export function thisMachine(): Machine {
  const c = cpus();
  return {
    cpus: c.length,
    cpuModel: c[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
    etcd: etcdVersion(),
  };
}

/** "3.4.23" from `etcd --version` ("etcd Version: 3.4.23"), or undefined without an etcd on PATH. */
function etcdVersion(): string | undefined {
  try {
    const out = execFileSync("etcd", ["--version"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return /etcd Version: (\S+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

export function currentCommit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

export function readResults(file = resultsFile): Results {
  if (!existsSync(file)) return { version: 1, entries: [] };
  const parsed = JSON.parse(readFileSync(file, "utf8")) as Results;
  if (parsed.version !== 1 || !Array.isArray(parsed.entries))
    throw new Error(`${file}: not a results file (version 1 with entries)`);
  return parsed;
}

/** `results` with `entry` in place of the entry of the same name (or added), in `order`. */
export function withEntry(results: Results, entry: BenchEntry, order: readonly string[]): Results {
  const rank = (n: string) => (order.includes(n) ? order.indexOf(n) : order.length);
  const entries = [...results.entries.filter((e) => e.name !== entry.name), entry].sort(
    (a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name),
  );
  return { version: 1, entries };
}

export function writeResults(results: Results, file = resultsFile): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(results, null, 1)}\n`);
  renameSync(tmp, file);
}

/** Every JSON object a benchmark printed, one a line; other lines are an error (stdout is for JSON). */
export function parseJsonLines(name: string, stdout: string): unknown[] {
  const lines = stdout.split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) throw new Error(`${name}: printed no JSON on stdout`);
  return lines.map((l, i) => {
    try {
      return JSON.parse(l);
    } catch {
      throw new Error(`${name}: line ${i + 1} of its stdout is not JSON: ${l.slice(0, 120)}`);
    }
  });
}

export const load1 = () => Number(loadavg()[0].toFixed(2));
