/**
 * Running exercise tests against different implementations: the learner's file, the reference
 * solution, the untouched stub, or a recorded mistake.
 *
 * Solves: one exercise test file must be run against several implementations of the same module
 * — that is how the grader grades, and how `npm test` proves each exercise honest (the stub fails,
 * the solution passes, every recorded mistake fails). Each implementation is a vitest *project*
 * whose resolver swaps the exercise's stub for another file; all projects run in ONE vitest process,
 * so proving fifty exercises costs one start-up, not two hundred.
 *
 * Invariants:
 * - a variant changes only which file an import of the stub resolves to; the test file is the same;
 * - the "stub" variant uses the stub as committed (from git HEAD), so an exercise the learner has
 *   already solved in place still proves that the untouched stub fails.
 * - a run always ends: a test file still running at the time limit (a learner's endless loop) is
 *   stopped from outside its worker and recorded as `timedOut`; nothing vitest started outlives
 *   the run.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { type Exercise, listMistakes, root } from "./course.ts";
import {
  clusterTimeLimitMs,
  needsCluster,
  ownClusterTimeLimitMs,
  reapGraderCluster,
  stateEnv,
  usesGraderCluster,
} from "./grader-cluster.ts";
import type { FileRecord, ProgressLine } from "./variants-reporter.ts";

/** What the grader's cluster setup reports while it starts (see scripts/grader-cluster.setup.ts). */
export type ClusterProgress = Extract<ProgressLine, { event: "cluster" }>;

export type VariantKind = "exercise" | "solution" | "stub" | "mistake";

export interface Variant {
  /** Unique project name: `label-selectors:solution`, `label-selectors:wrong-notin.ts`. */
  name: string;
  exercise: string;
  kind: VariantKind;
  /** The mistake file for kind "mistake". */
  mistake?: string;
  /** Test files, relative to the repository root. */
  tests: string[];
  /** Absolute path of a stub → absolute path of the file that stands in for it. */
  swap: Record<string, string>;
  /**
   * `[dir, as]`: a file under `dir` (absolute) resolves its imports as if it sat at the same place
   * under `as` — a copy of the exercises elsewhere imports `../../../code/…` as the originals do.
   */
  importsAs?: [string, string];
}

/** The grader's state: reports, hints seen, temporary files. COURSE_GRADE_DIR moves it (tests do). */
export const gradeDir = process.env.COURSE_GRADE_DIR
  ? resolve(process.env.COURSE_GRADE_DIR)
  : join(root, ".grade");
/** Where committed stubs are written when the working tree has changed them. */
export const pristineRoot = join(gradeDir, "pristine");

/**
 * The stub as committed. Returns the working-tree path when it is unchanged (or there is no git),
 * otherwise a copy of the committed text under .grade/pristine/ (imports inside it are resolved
 * as if it were still in its own folder — see variants.config.ts).
 */
export function pristineFile(rel: string): string {
  const working = join(root, rel);
  let committed: string;
  try {
    committed = execFileSync("git", ["show", `HEAD:${rel}`], { cwd: root, encoding: "utf8", stdio: "pipe" });
  } catch {
    return working;
  }
  if (existsSync(working) && readFileSync(working, "utf8") === committed) return working;
  const copy = join(pristineRoot, rel);
  mkdirSync(dirname(copy), { recursive: true });
  writeFileSync(copy, committed);
  return copy;
}

function testsOf(ex: Exercise): string[] {
  return ex.tests.map((t) => join(ex.dir, t));
}

/**
 * What the grader grades: the learner's `exercises/`, the reference `solutions/`, or the absolute
 * path of another folder laid out like `exercises/` (`NN-chapter/XX-name/<stub>.ts`).
 */
export type Target = "exercises" | "solutions" | (string & {});

/** The folder of an exercise inside a target. */
export function targetDir(ex: Exercise, target: Target): string {
  if (target === "exercises") return join(root, ex.dir);
  if (target === "solutions") return join(root, ex.solutionDir);
  return join(target, ex.chapter, basename(ex.dir));
}

export function exerciseVariant(ex: Exercise, target: Target): Variant {
  if (target === "exercises") {
    return { name: `${ex.id}:exercise`, exercise: ex.id, kind: "exercise", tests: testsOf(ex), swap: {} };
  }
  const swap = Object.fromEntries(
    ex.stubs.map((s) => [join(root, ex.dir, s), join(targetDir(ex, target), s)]),
  );
  if (target === "solutions") {
    return { name: `${ex.id}:solution`, exercise: ex.id, kind: "solution", tests: testsOf(ex), swap };
  }
  return {
    name: `${ex.id}:exercise`,
    exercise: ex.id,
    kind: "exercise",
    tests: testsOf(ex),
    swap,
    importsAs: [target, join(root, "exercises")],
  };
}

/** Every variant that proves an exercise honest: solution, pristine stub, each recorded mistake. */
export function integrityVariants(ex: Exercise): Variant[] {
  const stubSwap = Object.fromEntries(
    ex.stubs
      .map((s) => [join(root, ex.dir, s), pristineFile(join(ex.dir, s))] as const)
      .filter(([a, b]) => a !== b),
  );
  const variants: Variant[] = [
    exerciseVariant(ex, "solutions"),
    { name: `${ex.id}:stub`, exercise: ex.id, kind: "stub", tests: testsOf(ex), swap: stubSwap },
  ];
  for (const m of listMistakes(ex)) {
    // Only the one stub is replaced by the mistake; the other stubs get their solutions.
    const swap = Object.fromEntries(
      ex.stubs.map((s) => [join(root, ex.dir, s), join(root, ex.solutionDir, s === m.replaces ? m.file : s)]),
    );
    variants.push({
      name: `${ex.id}:${m.file}`,
      exercise: ex.id,
      kind: "mistake",
      mistake: m.file,
      tests: testsOf(ex),
      swap,
    });
  }
  return variants;
}

export interface RunOptions {
  /** Extra vitest CLI arguments. */
  args?: string[];
  /** A label for the temporary files, so concurrent runs don't collide. */
  label?: string;
  /** The longest one test file may run, from its first import to its last test (default 30 s). */
  timeLimitMs?: number;
  /** Aborting stops vitest at once; runVariants then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Told of each test file that ran out of time, as soon as it has been stopped. */
  onTimeout?: (variant: Variant, file: string, limitMs: number) => void;
  /** Told when the grader's cluster (chapter 8) starts, is ready, or failed to start. */
  onCluster?: (line: ClusterProgress) => void;
}

/**
 * The time limit of one test file: a cluster exercise's (chapter 8) is never below
 * clusterTimeLimitMs — a pod must be scheduled, started and probed on a loaded machine — or
 * ownClusterTimeLimitMs for one that starts a cluster of its own (03-diagnose).
 */
export function fileTimeLimitMs(file: string, limitMs: number): number {
  if (!needsCluster(file)) return limitMs;
  return Math.max(limitMs, usesGraderCluster(file) ? clusterTimeLimitMs : ownClusterTimeLimitMs);
}

/**
 * A learner's endless loop must not hang the grader. 30 s is many times what any exercise's tests
 * take (a few seconds at most) and above vitest's own 20 s per-test timeout, which still reports an
 * awaited promise that never settles as the test that timed out.
 */
export const defaultTimeLimitMs = 30_000;

const fileKey = (project: string, file: string) => `${project}\0${file}`;

/**
 * Stops vitest and every worker it started. vitest runs in its own process group, so one signal
 * reaches the workers too — a worker stuck in a learner's `while (true) {}` never reads a polite
 * request to stop, and would outlive its parent.
 */
function killTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === "win32") {
      execFileSync("taskkill", ["/pid", String(child.pid), "/T", "/F"], { stdio: "ignore" });
    } else {
      process.kill(-child.pid, "SIGKILL");
    }
  } catch {
    // Already gone.
  }
}

interface Round {
  /** Records of the files that ended, and of those stopped for running out of time. */
  records: FileRecord[];
  /** True when vitest was stopped before it ended on its own. */
  stopped: boolean;
}

/** One vitest process over the variants, watched from outside: see the header of variants-reporter.ts. */
async function runRound(
  variants: Variant[],
  label: string,
  limitMs: number,
  opts: RunOptions,
): Promise<Round> {
  const spec = join(gradeDir, `${label}.variants.json`);
  const results = join(gradeDir, `${label}.results.jsonl`);
  const clusterState = join(gradeDir, `${label}.cluster.json`);
  mkdirSync(gradeDir, { recursive: true });
  writeFileSync(spec, JSON.stringify(variants));
  rmSync(results, { force: true });
  const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
  const child = spawn(
    process.execPath,
    [vitest, "run", "--config", join(root, "scripts", "variants.config.ts"), ...(opts.args ?? [])],
    {
      cwd: root,
      env: {
        ...process.env,
        COURSE_VARIANTS: spec,
        COURSE_RESULTS: results,
        [stateEnv]: clusterState,
        FORCE_COLOR: "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group (POSIX), so killTree reaches the workers.
      detached: process.platform !== "win32",
      windowsHide: true,
    },
  );
  // The grader's cluster (chapter 8) goes with vitest: its containers are process groups of their
  // own, which killing vitest's group does not reach (see scripts/grader-cluster.ts).
  const stop = () => {
    killTree(child);
    reapGraderCluster(clusterState);
  };
  const removeFiles = () => {
    rmSync(spec, { force: true });
    rmSync(results, { force: true });
  };
  // On the way out (Ctrl-C), the quick parts first: a second signal may end this process while
  // the cluster's folder is still being removed.
  const onExit = () => {
    killTree(child);
    removeFiles();
    reapGraderCluster(clusterState);
  };
  // Ctrl-C reaches only the terminal's process group, and vitest is not in it: pass signals on.
  const onSignal = (signal: NodeJS.Signals) => {
    onExit();
    if (process.listenerCount(signal) === 1) {
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    }
  };
  process.on("exit", onExit);
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(s, onSignal);

  let output = "";
  child.stdout?.on("data", (d) => {
    output += d;
  });
  child.stderr?.on("data", (d) => {
    output += d;
  });

  const started = new Map<string, number>();
  const ended = new Map<string, FileRecord>();
  let final: FileRecord[] | undefined;
  let offset = 0;
  const readNew = () => {
    if (!existsSync(results)) return;
    const bytes = readFileSync(results).subarray(offset);
    const end = bytes.lastIndexOf(0x0a);
    if (end < 0) return;
    offset += end + 1;
    for (const text of bytes.subarray(0, end).toString("utf8").split("\n")) {
      if (!text) continue;
      const line = JSON.parse(text) as ProgressLine;
      if (line.event === "queued") started.set(fileKey(line.project, line.file), line.at);
      else if (line.event === "end") ended.set(fileKey(line.record.project, line.record.file), line.record);
      else if (line.event === "cluster") opts.onCluster?.(line);
      else final = line.records;
    }
  };

  const timedOut: FileRecord[] = [];
  let stopped = false;
  const watchdog = setInterval(() => {
    readNew();
    const now = Date.now();
    for (const [key, at] of started) {
      const [project, file] = key.split("\0");
      const limit = fileTimeLimitMs(file, limitMs);
      if (ended.has(key) || now - at <= limit) continue;
      timedOut.push({ project, file, timedOut: limit, tests: [] });
    }
    if (timedOut.length === 0) return;
    stopped = true;
    clearInterval(watchdog);
    stop();
  }, 200);
  const onAbort = () => {
    stopped = true;
    stop();
  };
  opts.signal?.addEventListener("abort", onAbort);

  const code: number = await new Promise((res) => child.on("close", (c) => res(c ?? 1)));
  clearInterval(watchdog);
  opts.signal?.removeEventListener("abort", onAbort);
  process.removeListener("exit", onExit);
  for (const s of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.removeListener(s, onSignal);
  // A worker vitest forgot (a test that left a process running) goes with the group.
  stop();
  readNew();
  removeFiles();
  if (opts.signal?.aborted) throw opts.signal.reason ?? new Error("grading was stopped");

  const byVariant = new Map(variants.map((v) => [v.name, v]));
  for (const t of timedOut) {
    // A file that ended just as the limit struck keeps its real result.
    if (ended.has(fileKey(t.project, t.file))) continue;
    const v = byVariant.get(t.project);
    if (v) opts.onTimeout?.(v, relative(root, t.file), t.timedOut ?? limitMs);
  }
  if (stopped) {
    const late = timedOut.filter((t) => !ended.has(fileKey(t.project, t.file)));
    return { records: [...ended.values(), ...late], stopped };
  }
  if (!final && ended.size === 0) {
    throw new Error(`vitest did not report any results (exit ${code}):\n${output.slice(-4000)}`);
  }
  return { records: final ?? [...ended.values()], stopped };
}

/**
 * Runs the variants in one vitest process and returns one record per (variant, test file).
 *
 * A test file still running after the time limit is stopped: vitest is killed (no timer inside a
 * worker stuck in an endless loop can fire, so the limit is kept from outside), the file gets a
 * `timedOut` record, and a new vitest process runs every file that had not ended yet. Each round
 * settles at least one file, so the run always ends.
 */
export async function runVariants(variants: Variant[], opts: RunOptions = {}): Promise<FileRecord[]> {
  const label = opts.label ?? `run-${process.pid}`;
  const limitMs = opts.timeLimitMs ?? defaultTimeLimitMs;
  const records: FileRecord[] = [];
  let pending = variants.filter((v) => v.tests.length > 0);
  for (let round = 0; pending.length > 0; round++) {
    const r = await runRound(pending, round === 0 ? label : `${label}-${round}`, limitMs, opts);
    records.push(...r.records);
    if (!r.stopped) break;
    const settled = new Set(r.records.map((rec) => fileKey(rec.project, rec.file)));
    pending = pending
      .map((v) => ({ ...v, tests: v.tests.filter((t) => !settled.has(fileKey(v.name, join(root, t)))) }))
      .filter((v) => v.tests.length > 0);
  }
  return records;
}

/** One test file's results within a variant. */
export interface FileSummary {
  passed: number;
  failed: number;
  loadError?: string;
  /** The file's first failure (the grader reports an exercise's required part by its files). */
  firstFailure?: { test: string; error: string };
  /** Failures that are a stub's `TODO`. */
  todoFailures?: number;
}

export interface VariantSummary {
  passed: number;
  failed: number;
  total: number;
  /** Per test file (relative path): how many of its tests failed, and whether it loaded at all. */
  files: Record<string, FileSummary>;
  /** The first failure, for the grader's one-line report. */
  firstFailure?: { test: string; error: string };
  /** Every failure is a stub's `TODO` — the learner has not begun. */
  notStarted: boolean;
  /** The first test file stopped for running out of time, and the limit it ran into. */
  timedOut?: { file: string; limitMs: number };
}

/** `30 s`, `1.5 s`: a limit as the grader prints it. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

export function summarize(records: FileRecord[], variant: Variant): VariantSummary {
  const mine = records.filter((r) => r.project === variant.name);
  const s: VariantSummary = { passed: 0, failed: 0, total: 0, files: {}, notStarted: false };
  let todoFailures = 0;
  for (const test of variant.tests) s.files[test] = { passed: 0, failed: 0 };
  for (const rec of mine) {
    const rel = relative(root, rec.file);
    s.files[rel] ??= { passed: 0, failed: 0 };
    const f = s.files[rel];
    if (rec.timedOut !== undefined) {
      const error = `still running after ${seconds(rec.timedOut)}, the time limit — an endless loop?`;
      f.loadError = error;
      f.failed += 1;
      s.failed += 1;
      s.timedOut ??= { file: rel, limitMs: rec.timedOut };
      s.firstFailure ??= { test: `${rel} (ran out of time)`, error };
      f.firstFailure ??= { test: `${rel} (ran out of time)`, error };
    }
    if (rec.loadError) {
      f.loadError = rec.loadError;
      f.failed += 1;
      s.failed += 1;
      s.firstFailure ??= { test: `${rel} (did not load)`, error: rec.loadError };
      f.firstFailure ??= { test: `${rel} (did not load)`, error: rec.loadError };
      if (/TODO/.test(rec.loadError)) {
        todoFailures++;
        f.todoFailures = (f.todoFailures ?? 0) + 1;
      }
    }
    for (const t of rec.tests) {
      if (t.state === "passed") {
        f.passed++;
        s.passed++;
      } else if (t.state === "failed") {
        f.failed++;
        s.failed++;
        s.firstFailure ??= { test: t.name, error: t.error ?? "(no message)" };
        f.firstFailure ??= { test: t.name, error: t.error ?? "(no message)" };
        if (/TODO/.test(t.error ?? "")) {
          todoFailures++;
          f.todoFailures = (f.todoFailures ?? 0) + 1;
        }
      }
    }
  }
  // A test file that never reported is a failure too: nothing may pass by not running.
  for (const [file, f] of Object.entries(s.files)) {
    if (!mine.some((r) => relative(root, r.file) === file)) {
      f.failed += 1;
      f.loadError = "the test file did not run";
      s.failed += 1;
      s.firstFailure ??= { test: file, error: "the test file did not run" };
      f.firstFailure ??= { test: file, error: "the test file did not run" };
    }
  }
  s.total = s.passed + s.failed;
  s.notStarted = s.passed === 0 && s.failed > 0 && todoFailures === s.failed;
  return s;
}

/**
 * The summary of some of a variant's test files only (an exercise's required or optional part),
 * built from the per-file results as summarize builds the whole.
 */
export function summarizeFiles(s: VariantSummary, files: string[]): VariantSummary {
  const part: VariantSummary = { passed: 0, failed: 0, total: 0, files: {}, notStarted: false };
  let todo = 0;
  for (const file of files) {
    const f = s.files[file];
    if (!f) continue;
    part.files[file] = f;
    part.passed += f.passed;
    part.failed += f.failed;
    todo += f.todoFailures ?? 0;
    if (f.failed > 0) part.firstFailure ??= f.firstFailure;
  }
  if (s.timedOut && files.includes(s.timedOut.file)) part.timedOut = s.timedOut;
  part.total = part.passed + part.failed;
  part.notStarted = part.passed === 0 && part.failed > 0 && todo === part.failed;
  return part;
}
