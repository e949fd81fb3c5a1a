/**
 * A vitest reporter that writes one JSON record per (project, test file): the grader's raw data.
 *
 * Solves: vitest's built-in JSON report names test files but not the project that ran them, and
 * the grader runs the same test file in several projects at once (against the stub, the solution
 * and each recorded mistake). This reporter keeps the project name, each test's state and the
 * first lines of its first error, and a module-level error (the learner's file does not even load).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { mkdirSync, writeFileSync } from "node:fs";
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
  tests: TestRecord[];
}

function firstLines(text: string | undefined, n = 6): string {
  return (text ?? "").split("\n").slice(0, n).join("\n").trim();
}

export default class VariantsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const out = process.env.COURSE_RESULTS;
    if (!out) throw new Error("VariantsReporter: set COURSE_RESULTS to the output path");
    const records: FileRecord[] = testModules.map((m) => {
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
    });
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(records, null, 2));
  }
}
