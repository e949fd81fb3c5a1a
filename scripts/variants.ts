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
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { type Exercise, listMistakes, root } from "./course.ts";
import type { FileRecord } from "./variants-reporter.ts";

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
}

export const gradeDir = join(root, ".grade");
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

export function exerciseVariant(ex: Exercise, target: "exercises" | "solutions"): Variant {
  if (target === "exercises") {
    return { name: `${ex.id}:exercise`, exercise: ex.id, kind: "exercise", tests: testsOf(ex), swap: {} };
  }
  const swap = Object.fromEntries(
    ex.stubs.map((s) => [join(root, ex.dir, s), join(root, ex.solutionDir, s)]),
  );
  return { name: `${ex.id}:solution`, exercise: ex.id, kind: "solution", tests: testsOf(ex), swap };
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
}

/** Runs the variants in one vitest process and returns one record per (variant, test file). */
export async function runVariants(variants: Variant[], opts: RunOptions = {}): Promise<FileRecord[]> {
  const label = opts.label ?? `run-${process.pid}`;
  const spec = join(gradeDir, `${label}.variants.json`);
  const results = join(gradeDir, `${label}.results.json`);
  mkdirSync(gradeDir, { recursive: true });
  writeFileSync(spec, JSON.stringify(variants));
  rmSync(results, { force: true });
  const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
  const child = spawn(
    process.execPath,
    [vitest, "run", "--config", join(root, "scripts", "variants.config.ts"), ...(opts.args ?? [])],
    {
      cwd: root,
      env: { ...process.env, COURSE_VARIANTS: spec, COURSE_RESULTS: results, FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const code: number = await new Promise((res) => child.on("close", (c) => res(c ?? 1)));
  if (!existsSync(results)) {
    throw new Error(`vitest did not report any results (exit ${code}):\n${output.slice(-4000)}`);
  }
  const records = JSON.parse(readFileSync(results, "utf8")) as FileRecord[];
  rmSync(spec, { force: true });
  rmSync(results, { force: true });
  return records;
}

export interface VariantSummary {
  passed: number;
  failed: number;
  total: number;
  /** Per test file (relative path): how many of its tests failed, and whether it loaded at all. */
  files: Record<string, { passed: number; failed: number; loadError?: string }>;
  /** The first failure, for the grader's one-line report. */
  firstFailure?: { test: string; error: string };
  /** Every failure is a stub's `TODO` — the learner has not begun. */
  notStarted: boolean;
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
    if (rec.loadError) {
      f.loadError = rec.loadError;
      f.failed += 1;
      s.failed += 1;
      s.firstFailure ??= { test: `${rel} (did not load)`, error: rec.loadError };
      if (/TODO/.test(rec.loadError)) todoFailures++;
    }
    for (const t of rec.tests) {
      if (t.state === "passed") {
        f.passed++;
        s.passed++;
      } else if (t.state === "failed") {
        f.failed++;
        s.failed++;
        s.firstFailure ??= { test: t.name, error: t.error ?? "(no message)" };
        if (/TODO/.test(t.error ?? "")) todoFailures++;
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
    }
  }
  s.total = s.passed + s.failed;
  s.notStarted = s.passed === 0 && s.failed > 0 && todoFailures === s.failed;
  return s;
}
