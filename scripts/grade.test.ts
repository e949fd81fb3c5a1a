import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { type Exercise, listExercises, root } from "./course.ts";
import { parseArgs, render, select } from "./grade.ts";
import type { VariantSummary } from "./variants.ts";

const run = promisify(execFile);
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");

async function grade(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [tsx, join(root, "scripts", "grade.ts"), ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: "1" },
    });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

const fake = (id: string, chapter: string, n: number): Exercise => ({
  id,
  chapter,
  chapterNumber: Number(chapter.slice(0, 2)),
  number: n,
  title: id,
  dir: `exercises/${chapter}/0${n}-${id}`,
  solutionDir: `solutions/${chapter}/0${n}-${id}`,
  stubs: ["x.ts"],
  tests: ["x.test.ts"],
  hints: ["a", "b"],
});

const summary = (passed: number, failed: number, notStarted = false): VariantSummary => ({
  passed,
  failed,
  total: passed + failed,
  files: {},
  notStarted,
  ...(failed > 0
    ? { firstFailure: { test: "parse > rejects x=", error: "AssertionError: expected 1 to be 2" } }
    : {}),
});

describe("grade arguments", () => {
  it("take one chapter or exercise, --watch and --target", () => {
    expect(parseArgs([])).toEqual({ watch: false, target: "exercises" });
    expect(parseArgs(["1", "--watch", "--target", "solutions"])).toEqual({
      query: "1",
      watch: true,
      target: "solutions",
    });
    expect(parseArgs(["--target=solutions"])).toMatchObject({ target: "solutions" });
    expect(parseArgs(["--target", "nope"])).toMatch(/--target must be "exercises" or "solutions"/);
    expect(parseArgs(["a", "b"])).toMatch(/one chapter or exercise at a time/);
    expect(parseArgs(["--fast"])).toMatch(/unknown flag --fast/);
  });

  it("select an exercise or a chapter, and list what exists for an unknown query", () => {
    const all = listExercises();
    expect(select(all, undefined)).toBe(all);
    expect(select(all, "label-selectors")).toEqual([all.find((e) => e.id === "label-selectors")]);
    expect(select(all, "0")).toEqual(all.filter((e) => e.chapter === "00-life-of-a-pod"));
    expect(select(all, "no-such-thing")).toMatch(
      /no chapter or exercise "no-such-thing". Exercises:\n.*label-selectors/,
    );
  });
});

describe("grade output", () => {
  const exercises = [
    fake("prefix-end", "09-made-up", 1),
    fake("txn", "09-made-up", 2),
    fake("wal", "09-made-up", 3),
  ];
  const results = new Map([
    ["prefix-end", summary(5, 0)],
    ["txn", summary(3, 2)],
    ["wal", summary(0, 4, true)],
  ]);

  it("shows progress per chapter and one line per exercise, with the first failure and the hint command", () => {
    const { text } = render(exercises, results, "exercises");
    expect(text).toMatch(/09-made-up.*\[.*\] 1\/3/);
    expect(text).toMatch(/✓ passed\s+9\.1 prefix-end\s+5\/5 tests/);
    expect(text).toMatch(
      /✗ failed\s+9\.2 txn\s+3\/5 tests\n\s+parse > rejects x=\n\s+AssertionError: expected 1 to be 2\n\s+next hint: npm run hint -- txn/,
    );
    expect(text).toMatch(/· not started 9\.3 wal/);
    expect(text.trim().split("\n").at(-1)).toBe("grade: 1 passed, 2 failed (exercises)");
  });

  it("reports in the documented shape", () => {
    const { report } = render(exercises, results, "solutions");
    expect(report).toEqual({
      target: "solutions",
      passed: 1,
      total: 3,
      exercises: [
        {
          id: "prefix-end",
          chapter: "09-made-up",
          title: "prefix-end",
          status: "passed",
          tests: { passed: 5, failed: 0 },
        },
        {
          id: "txn",
          chapter: "09-made-up",
          title: "txn",
          status: "failed",
          tests: { passed: 3, failed: 2 },
        },
        {
          id: "wal",
          chapter: "09-made-up",
          title: "wal",
          status: "failed",
          tests: { passed: 0, failed: 4 },
        },
      ],
    });
  });
});

describe("npm run grade", () => {
  it("grades the reference solutions: all pass, exit 0, report written", async () => {
    const { code, out } = await grade("--target", "solutions");
    expect(out).toMatch(/grade: \d+ passed, 0 failed \(solutions\)/);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(root, ".grade", "report.json"), "utf8"));
    expect(report.target).toBe("solutions");
    expect(report.passed).toBe(report.total);
    expect(report.total).toBe(listExercises().length);
  }, 120_000);

  it("refuses an unknown exercise with the list and exit 2", async () => {
    const { code, out } = await grade("no-such-exercise");
    expect(code).toBe(2);
    expect(out).toMatch(/no chapter or exercise "no-such-exercise"/);
  }, 60_000);
});
