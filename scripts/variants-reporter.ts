/**
 * A vitest reporter that streams one JSON line per event to a file: the grader's raw data.
 *
 * Solves: vitest's built-in JSON report names test files but not the project that ran them, and
 * the grader runs the same test file in several projects at once (against the stub, the solution
 * and each recorded mistake). This reporter keeps the project name, each test's state and the
 * first lines of its first error, and a module-level error (the learner's file does not even load).
 *
 * It also streams, as they happen, when each test file starts and ends. A learner's endless loop
 * blocks the worker that runs it, and no timer inside that worker can fire; this reporter runs in
 * vitest's main process, whose event loop stays free, so the grader (scripts/variants.ts) can see
 * which file has been running too long, stop vitest, and keep the results of every file that ended.
 *
 * Invariants:
 * - lines are appended synchronously, so a line written is on disk even if vitest is killed next;
 * - every test file that starts gets a `queued` line before its first import, and an `end` line
 *   when it has finished (or failed to load); the `final` line, when vitest ends on its own,
 *   repeats every file's record and wins over the `end` lines.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

export interface TestRecord {
  name: string;
  state: "passed" | "failed" | "skipped" | "pending";
  error?: string;
}

export interface FileRecord {
  project: string;
  file: string;
  /** An error that stopped the file from running at all (syntax error, failed import). */
  loadError?: string;
  /** Set when the grader stopped the file because it ran longer than this many milliseconds. */
  timedOut?: number;
  tests: TestRecord[];
}

/** One line of the stream. `at` is the reporter's clock (Date.now()) when the event happened. */
export type ProgressLine =
  | { event: "queued"; project: string; file: string; at: number }
  | { event: "end"; record: FileRecord; at: number }
  | { event: "final"; records: FileRecord[]; at: number }
  /** Written by the grader's cluster setup (scripts/grader-cluster.setup.ts), not by this reporter. */
  | { event: "cluster"; phase: "starting" | "ready" | "failed"; at: number; ms?: number; message?: string };

function firstLines(text: string | undefined, n = 6): string {
  return (text ?? "").split("\n").slice(0, n).join("\n").trim();
}

function recordOf(m: TestModule): FileRecord {
  const loadErrors = m.errors();
  const tests: TestRecord[] = [...m.children.allTests()].map((t) => {
    const r = t.result();
    const e = r.errors?.[0];
    return {
      name: t.fullName,
      state: r.state,
      ...(r.state === "failed" && e ? { error: firstLines(`${e.name ?? "Error"}: ${e.message}`) } : {}),
    };
  });
  return {
    project: m.project.name,
    file: m.moduleId,
    ...(loadErrors.length > 0 ? { loadError: firstLines(loadErrors[0].message) } : {}),
    tests,
  };
}

export default class VariantsReporter implements Reporter {
  private readonly out: string;

  constructor() {
    const out = process.env.COURSE_RESULTS;
    if (!out) throw new Error("VariantsReporter: set COURSE_RESULTS to the output path");
    this.out = out;
    mkdirSync(dirname(out), { recursive: true });
  }

  private write(line: ProgressLine): void {
    appendFileSync(this.out, `${JSON.stringify(line)}\n`);
  }

  onTestModuleQueued(m: TestModule): void {
    this.write({ event: "queued", project: m.project.name, file: m.moduleId, at: Date.now() });
  }

  onTestModuleEnd(m: TestModule): void {
    this.write({ event: "end", record: recordOf(m), at: Date.now() });
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    this.write({ event: "final", records: testModules.map(recordOf), at: Date.now() });
  }
}
