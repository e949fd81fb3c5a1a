/**
 * `npm run bench -- <name> [--json]` — runs the benchmarks of one component: every `*.bench.ts` under `code/<name>/`,
 * or one benchmark by its file's base name (`informer` → code/client/testing/informer.bench.ts).
 * `npm run bench -- all --json [--only a,b] [flags…]` runs every benchmark of the course in
 * turn and writes their JSON into docs/performance/results.json, the file the performance page
 * draws its charts from (scripts/bench-results.ts); flags after `all` go to every benchmark.
 * A benchmark may have a second half in another file, run right after it under its name
 * (`halves` below: `informer` then prints the ReplicaSet controller's figures too); with `--json`
 * each half prints its own JSON object, one a line.
 *
 * Performance is measured here, never in timed tests: each benchmark prints its figures and the
 * ratio against a reference run on the same machine in the same run (for the store: a real etcd).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  type BenchEntry,
  benchmarkOrder,
  currentCommit,
  load1,
  parseJsonLines,
  readResults,
  resultsFile,
  thisMachine,
  withEntry,
  writeResults,
} from "./bench-results.ts";
import { root } from "./course.ts";

/** Every `*.bench.ts` under `dir`, at any depth (benchmarks live in a component's testing/ folder). */
function benchFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".bench.ts"))
    .map((f) => join(dir, f))
    .sort();
}

function benchmarks(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const code = join(root, "code");
  for (const dir of existsSync(code) ? readdirSync(code) : []) {
    const abs = join(code, dir);
    if (!statSync(abs).isDirectory()) continue;
    const files = benchFiles(abs);
    if (files.length > 0) found.set(dir, files);
  }
  // Each file by its own base name too (`informer`), unless a folder already has that name.
  for (const file of [...found.values()].flat()) {
    const base = file.slice(file.lastIndexOf("/") + 1, -".bench.ts".length);
    if (!found.has(base)) found.set(base, [file]);
  }
  return found;
}

/**
 * Benchmarks whose figures are printed together: issue 13's informer benchmark has a ReplicaSet
 * half, which lives beside the controller it measures (code/controllers/testing/).
 */
const halves: Record<string, string[]> = { informer: ["replica-set"] };

const [name, ...rest] = process.argv.slice(2);
const all = benchmarks();
for (const [first, more] of Object.entries(halves))
  if (all.has(first)) all.set(first, [...all.get(first)!, ...more.flatMap((m) => all.get(m) ?? [])]);
const list = all.size > 0 ? ["all", ...all.keys()].join(", ") : "none yet (chapter 1 adds `store`)";
if (!name || name.startsWith("-") || (name !== "all" && !all.has(name))) {
  console.error(
    `${name && !name.startsWith("-") ? `no benchmark "${name}". ` : ""}usage: npm run bench -- <name> [--json], or -- all --json [--only a,b] to rewrite docs/performance/results.json`,
  );
  console.error(`benchmarks: ${list}`);
  process.exit(2);
}
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");

/** The benchmark running now, and the signal that asked us to stop (we start nothing after it). */
let running: ChildProcess | undefined;
let stopping: NodeJS.Signals | undefined;
// Ctrl-C in a terminal signals the whole foreground group, the benchmark included: passing that
// SIGINT on would make one Ctrl-C arrive twice (a second one means "exit now, skip the clean
// stop"). A signal sent to this process alone (kill, a CI runner) must reach the benchmark, or it
// would run on, orphaned, with its API servers and kubelets.
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    stopping = sig;
    if (sig === "SIGINT" && process.stdin.isTTY) return;
    running?.kill(sig);
  });
}

/** Runs one benchmark file to its end; its stdout captured with `capture`, else the terminal's. */
function runFile(file: string, args: string[], capture: boolean) {
  return new Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string }>(
    (resolve, reject) => {
      const child = spawn(process.execPath, [tsx, file, ...args], {
        stdio: ["ignore", capture ? "pipe" : "inherit", "inherit"],
        cwd: root,
      });
      running = child;
      let stdout = "";
      child.stdout?.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
      });
      child.on("error", reject);
      child.on("close", (status, signal) => {
        running = undefined;
        resolve({ status, signal, stdout });
      });
    },
  );
}

/** The exit code after a benchmark ended with `status`/`signal`, or when we were asked to stop. */
const failed = (r: { status: number | null; signal: NodeJS.Signals | null }) =>
  stopping ? 130 : r.status !== 0 ? (r.status ?? 1) : 0;

if (name === "all") process.exit(await runAll(rest));
for (const file of all.get(name)!) {
  const code = failed(await runFile(file, rest, false));
  if (stopping) console.error(`${name}: stopped by ${stopping}`);
  if (code !== 0) process.exit(code);
}

/**
 * `all`: each benchmark in turn; with `--json`, each one's JSON goes into the results file as
 * soon as it finishes (a failure later keeps the entries already written). Returns the exit code.
 */
async function runAll(args: string[]): Promise<number> {
  const json = args.includes("--json");
  const onlyAt = args.indexOf("--only");
  const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? "").split(",").filter(Boolean) : undefined;
  const passed = args.filter((a, i) => a !== "--json" && i !== onlyAt && i !== onlyAt + 1);
  const unknown = (only ?? []).filter((n) => !all.has(n));
  if (unknown.length > 0) {
    console.error(`--only: no benchmark ${unknown.map((n) => `"${n}"`).join(", ")}; benchmarks: ${list}`);
    return 2;
  }
  const names = benchmarkOrder.filter((n) => all.has(n) && (!only || only.includes(n)));
  for (const [i, bench] of names.entries()) {
    const started = Date.now();
    const before = load1();
    console.error(
      `[${i + 1}/${names.length}] npm run bench -- ${bench} ${[...passed, ...(json ? ["--json"] : [])].join(" ")}`,
    );
    const outputs: unknown[] = [];
    for (const file of all.get(bench)!) {
      const r = await runFile(file, [...passed, ...(json ? ["--json"] : [])], json);
      const code = failed(r);
      if (code !== 0) {
        const why = stopping ? `stopped by ${stopping}` : `exited with ${r.status ?? r.signal}`;
        console.error(`${bench}: ${why}; the results file keeps its earlier entry`);
        return code;
      }
      if (json) outputs.push(...parseJsonLines(bench, r.stdout));
    }
    if (!json) continue;
    const entry: BenchEntry = {
      name: bench,
      args: passed,
      date: new Date().toISOString(),
      commit: currentCommit(),
      machine: thisMachine(),
      loadAverage: { before, after: load1() },
      seconds: Math.round((Date.now() - started) / 1000),
      result: outputs,
    };
    writeResults(withEntry(readResults(), entry, benchmarkOrder));
    console.error(`  ${bench}: done in ${entry.seconds} s → ${resultsFile}`);
  }
  return 0;
}
