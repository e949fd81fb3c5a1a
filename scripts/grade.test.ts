import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { type Exercise, listExercises, root } from "./course.ts";
import { exerciseOfChange, nextFocus, parseArgs, render, select } from "./grade.ts";
import type { VariantSummary } from "./variants.ts";

const run = promisify(execFile);
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");
const scratch = mkdtempSync(join(tmpdir(), "grade-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// The grader's state (report, hints seen) goes to the scratch folder, not the learner's .grade/.
const gradeDir = join(scratch, "state");
const env = () => ({ ...process.env, NO_COLOR: "1", COURSE_GRADE_DIR: gradeDir, [marker]: "1" });

/** A marker in the environment of everything a grading run starts, to find what it left behind. */
const marker = `GRADE_TEST_${process.pid}_${Date.now()}`;

function leftBehind(): string[] {
  if (process.platform !== "linux") return [];
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "utf8").includes(marker)) {
        found.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ")}`);
      }
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

async function grade(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [tsx, join(root, "scripts", "grade.ts"), ...args], {
      cwd: root,
      env: env(),
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

const timedOut = (file: string, limitMs: number): VariantSummary => ({
  ...summary(0, 1),
  firstFailure: { test: `${file} (ran out of time)`, error: "still running" },
  timedOut: { file, limitMs },
});

describe("grade arguments", () => {
  it("take one chapter or exercise, --watch, --target and --time-limit", () => {
    expect(parseArgs([])).toEqual({ watch: false, target: "exercises", timeLimitSeconds: 30 });
    expect(parseArgs(["1", "--watch", "--target", "solutions"])).toEqual({
      query: "1",
      watch: true,
      target: "solutions",
      timeLimitSeconds: 30,
    });
    expect(parseArgs(["--target=solutions"])).toMatchObject({ target: "solutions" });
    expect(parseArgs(["--target", scratch])).toMatchObject({ target: scratch });
    expect(parseArgs(["--target", "nope"])).toMatch(
      /--target must be "exercises", "solutions" or a folder laid out like exercises\/ \(there is no folder "nope"\)/,
    );
    expect(parseArgs(["--time-limit", "5"])).toMatchObject({ timeLimitSeconds: 5 });
    expect(parseArgs(["--time-limit=0.5"])).toMatchObject({ timeLimitSeconds: 0.5 });
    expect(parseArgs(["--time-limit", "forever"])).toMatch(/--time-limit takes a number of seconds above 0/);
    expect(parseArgs(["--time-limit", "0"])).toMatch(/--time-limit takes a number of seconds above 0/);
    expect(parseArgs(["a", "b"])).toMatch(/one chapter or exercise at a time/);
    expect(parseArgs(["--fast"])).toMatch(/unknown flag --fast/);
  });

  it("select an exercise or a chapter; an unknown name gets one line with the fix", () => {
    const all = listExercises();
    expect(select(all, undefined)).toBe(all);
    expect(select(all, "label-selectors")).toEqual([all.find((e) => e.id === "label-selectors")]);
    expect(select(all, "0")).toEqual(all.filter((e) => e.chapter === "00-life-of-a-pod"));
    const unknown = select(all, "no-such-thing");
    expect(unknown).toMatch(/^no chapter or exercise "no-such-thing" — `npm run hint` lists the exercises/);
    expect(unknown).not.toContain("\n");
    expect(select(all, "lable-selectors")).toMatch(/did you mean label-selectors\?/);
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
  const ctx = { course: exercises };

  it("shows progress per chapter and one line per exercise, with the first failure and the next hint", () => {
    const { text } = render(exercises, results, "exercises", ctx);
    expect(text).toMatch(/\[.*\] 1\/3\s+09-made-up/);
    expect(text).toMatch(/✓ passed\s+9\.1 prefix-end\s+5\/5 tests/);
    expect(text).toMatch(
      /✗ failed\s+9\.2 txn\s+3\/5 tests\n\s+parse > rejects x=\n\s+AssertionError: expected 1 to be 2\n\s+next hint \(1 of 2\): npm run hint -- txn/,
    );
    expect(text).toMatch(/· not started 9\.3 wal/);
  });

  it("counts not started apart from failed, in the summary line and the report", () => {
    const { text, report } = render(exercises, results, "exercises", ctx);
    expect(text.trim().split("\n").at(-1)).toBe("grade: 1 passed, 1 failed, 1 not started (exercises)");
    expect(report).toMatchObject({ passed: 1, failed: 1, notStarted: 1, total: 3 });
    expect(report.exercises.map((e) => e.status)).toEqual(["passed", "failed", "not started"]);
  });

  it("reports in the documented shape; a reference answer is never 'not started'", () => {
    const { report } = render(exercises, results, "solutions", ctx);
    expect(report).toEqual({
      target: "solutions",
      passed: 1,
      failed: 2,
      notStarted: 0,
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
          reason: "parse > rejects x=: AssertionError: expected 1 to be 2",
          tests: { passed: 3, failed: 2 },
        },
        {
          id: "wal",
          chapter: "09-made-up",
          title: "wal",
          status: "failed",
          reason: "parse > rejects x=: AssertionError: expected 1 to be 2",
          tests: { passed: 0, failed: 4 },
        },
      ],
    });
  });

  it("lines the progress bars up whatever the chapters' titles", () => {
    const all = listExercises();
    const every = new Map(all.map((e) => [e.id, summary(1, 0)]));
    const made = [fake("a", "09-made-up", 1), fake("b", "10-a-chapter-whose-title-goes-on-and-on-and-on", 1)];
    for (const [list, res] of [
      [all, every],
      [made, new Map(made.map((e) => [e.id, summary(1, 0)]))],
    ] as const) {
      const bars = render(list, res, "exercises", { course: list })
        .text.split("\n")
        .filter((l) => l.includes("["));
      expect(bars.length).toBe(new Set(list.map((e) => e.chapter)).size);
      expect(new Set(bars.map((l) => l.indexOf("["))).size, bars.join("\n")).toBe(1);
      expect(new Set(bars.map((l) => l.indexOf("]"))).size, bars.join("\n")).toBe(1);
    }
  });

  it("grading one exercise names its chapter without a 0/1 progress bar", () => {
    const all = listExercises();
    const one = all.find((e) => e.chapterNumber === 2 && e.number === 1)!;
    const inChapter = all.filter((e) => e.chapter === one.chapter).length;
    const { text } = render([one], new Map([[one.id, summary(3, 2)]]), "exercises", { course: all });
    expect(text).not.toMatch(/\b0\/1\b/);
    expect(text).toMatch(
      new RegExp(
        `^Chapter 2 .* — exercise 2\\.1 only, one of ${inChapter} \\(npm run grade -- 2 grades the chapter\\)`,
        "m",
      ),
    );
    expect(text).toMatch(/✗ failed\s+2\.1 /);
  });

  it("stops offering a next hint once every hint has been seen", () => {
    const some = render(exercises, results, "exercises", { ...ctx, hintsSeen: { txn: 1 } }).text;
    expect(some).toMatch(/next hint \(2 of 2\): npm run hint -- txn/);
    const all = render(exercises, results, "exercises", { ...ctx, hintsSeen: { txn: 2 } }).text;
    expect(all).not.toMatch(/next hint/);
    expect(all).toMatch(
      /all 2 hints seen \(npm run hint -- txn --all shows them again\); the reference answer is in solutions\/09-made-up\/02-txn\//,
    );
  });

  it("says which exercise ran out of time and its limit, and counts it failed with that reason", () => {
    const loop = fake("loop", "09-made-up", 4);
    const list = [...exercises, loop];
    const res = new Map([...results, ["loop", timedOut(`${loop.dir}/x.test.ts`, 30_000)]]);
    const { text, report } = render(list, res, "exercises", { course: list });
    expect(text).toMatch(/✗ failed\s+9\.4 loop\s+ran out of time \(limit 30 s\)/);
    expect(text).toContain(`${loop.dir}/x.test.ts was still running after 30 s`);
    expect(text).toContain("--time-limit");
    expect(text.trim().split("\n").at(-1)).toBe(
      "grade: 1 passed, 2 failed (1 ran out of time), 1 not started (exercises)",
    );
    expect(report.exercises.at(-1)).toMatchObject({
      id: "loop",
      status: "failed",
      reason: `ran out of time (limit 30 s): ${loop.dir}/x.test.ts was still running`,
    });
  });

  it("shows an optional part apart, and never counts it as failed", () => {
    const ex = {
      ...fake("sel", "09-made-up", 1),
      tests: ["x.test.ts", "y.optional.test.ts"],
      optionalTests: ["y.optional.test.ts"],
    };
    const file = (f: string) => `${ex.dir}/${f}`;
    const todo = { test: "parse > reads x", error: "Error: TODO: parse" };
    const wrong = { test: "parse > reads y", error: "AssertionError: expected 1 to be 2" };
    const withParts = (
      main: { passed: number; failed: number; firstFailure?: typeof todo },
      optional: { passed: number; failed: number; firstFailure?: typeof todo; todoFailures?: number },
    ): VariantSummary => ({
      passed: main.passed + optional.passed,
      failed: main.failed + optional.failed,
      total: main.passed + main.failed + optional.passed + optional.failed,
      // The optional file's failure comes first, as it would if its tests ran first.
      firstFailure: optional.firstFailure ?? main.firstFailure,
      notStarted: false,
      files: { [file("x.test.ts")]: main, [file("y.optional.test.ts")]: optional },
    });
    const show = (r: VariantSummary) => render([ex], new Map([["sel", r]]), "exercises", { course: [ex] });

    const notStarted = show(
      withParts({ passed: 5, failed: 0 }, { passed: 0, failed: 3, firstFailure: todo, todoFailures: 3 }),
    );
    expect(notStarted.text).toMatch(/✓ passed\s+9\.1 sel\s+5\/5 tests\n\s+· optional part not started/);
    expect(notStarted.report).toMatchObject({ passed: 1, failed: 0, total: 1 });
    expect(notStarted.report.exercises[0].optional).toEqual({
      status: "not started",
      tests: { passed: 0, failed: 3 },
    });

    const halfway = show(withParts({ passed: 5, failed: 0 }, { passed: 2, failed: 1, firstFailure: wrong }));
    expect(halfway.text).toMatch(
      /✓ passed\s+9\.1 sel\s+5\/5 tests\n\s+○ optional part: 2\/3 tests \(optional: not counted as failed\)/,
    );
    expect(halfway.text).not.toContain("✗");
    expect(halfway.text.trim().split("\n").at(-1)).toBe(
      "grade: 1 passed, 0 failed, 0 not started (exercises)",
    );

    const done = show(withParts({ passed: 5, failed: 0 }, { passed: 3, failed: 0 }));
    expect(done.text).toMatch(/✓ optional part passed \(3\/3 tests\)/);

    // The required part decides, and its own first failure is the one shown, not the optional one's.
    const mainFails = show(
      withParts(
        { passed: 4, failed: 1, firstFailure: wrong },
        { passed: 0, failed: 3, firstFailure: todo, todoFailures: 3 },
      ),
    );
    expect(mainFails.text).toMatch(/✗ failed\s+9\.1 sel\s+4\/5 tests\n\s+parse > reads y/);
    expect(mainFails.report.exercises[0]).toMatchObject({
      status: "failed",
      reason: "parse > reads y: AssertionError: expected 1 to be 2",
    });
  });
});

describe("watch mode keeps to the exercise being edited", () => {
  const all = listExercises().filter((e) => e.chapterNumber === 1);
  const [first, second, third] = all;
  const report = (passedIds: string[]) => ({
    exercises: all.map((e) => ({ id: e.id, status: passedIds.includes(e.id) ? "passed" : "failed" })),
  });

  it("maps a saved file to its exercise, in any target", () => {
    const file = `${basename(third.dir)}/${third.stubs[0]}`;
    expect(exerciseOfChange(all, "exercises", join(root, "exercises"), `${third.chapter}/${file}`)?.id).toBe(
      third.id,
    );
    expect(exerciseOfChange(all, "solutions", join(root, "solutions"), `${third.chapter}/${file}`)?.id).toBe(
      third.id,
    );
    expect(exerciseOfChange(all, scratch, scratch, `${third.chapter}/${file}`)?.id).toBe(third.id);
    expect(exerciseOfChange(all, "exercises", join(root, "code"), "store/kv.ts")).toBeUndefined();
  });

  it("starts at the first unfinished exercise, follows the one edited, and moves on when it passes", () => {
    const start = nextFocus({}, report([]), undefined);
    expect(start).toEqual({ focus: first.id, showTask: true });
    // Editing another exercise moves the focus there, without printing its task again.
    const editing = nextFocus({ focus: first.id, taskShown: first.id }, report([]), third.id);
    expect(editing).toEqual({ focus: third.id, showTask: false });
    // A save in code/ (no exercise edited) keeps the focus.
    expect(nextFocus({ focus: third.id, taskShown: first.id }, report([]), undefined)).toEqual({
      focus: third.id,
      showTask: false,
    });
    // When the focused exercise passes, the next unfinished one after it comes up, task and all.
    const done = nextFocus({ focus: first.id, taskShown: first.id }, report([first.id]), undefined);
    expect(done).toEqual({ focus: second.id, showTask: true, passed: first.id });
    expect(nextFocus({ focus: second.id }, report(all.map((e) => e.id)), undefined)).toEqual({
      focus: undefined,
      showTask: false,
      passed: second.id,
    });
  });

  it("re-grades on save and shows the edited exercise, not the first unfinished one's README", async () => {
    const target = join(scratch, "watch");
    for (const ex of all) {
      for (const stub of ex.stubs) {
        const to = join(target, ex.chapter, basename(ex.dir), stub);
        mkdirSync(dirname(to), { recursive: true });
        copyFileSync(join(root, ex.dir, stub), to);
      }
    }
    const child: ChildProcess = spawn(
      process.execPath,
      [tsx, join(root, "scripts", "grade.ts"), "1", "--watch", "--target", target],
      { cwd: root, env: env(), stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
    });
    child.stderr?.on("data", (d) => {
      out += d;
    });
    const screens = () => out.split("\x1b[2J\x1b[H").filter((s) => s.includes("save a file to re-grade"));
    const waitFor = async (n: number) => {
      for (let i = 0; i < 600 && screens().length < n; i++) await new Promise((r) => setTimeout(r, 100));
      expect(screens().length, out.slice(-3000)).toBeGreaterThanOrEqual(n);
    };
    try {
      await waitFor(1);
      const firstTask = readFileSync(join(root, first.dir, "README.md"), "utf8").split("\n")[2];
      expect(screens()[0]).toContain(`Next: ${first.title}`);
      expect(screens()[0]).toContain(firstTask);
      appendFileSync(join(target, third.chapter, basename(third.dir), third.stubs[0]), "\n// editing\n");
      await waitFor(2);
      const second = screens()[1];
      expect(second).toMatch(new RegExp(`Working on 1\\.${third.number} ${third.id}`));
      expect(second).toContain(`${third.dir}/README.md`);
      expect(second).not.toContain(firstTask);
      expect(second).not.toContain("Next:");
    } finally {
      child.kill("SIGINT");
      await new Promise((r) => child.once("close", r));
    }
    expect(leftBehind()).toEqual([]);
  }, 120_000);
});

describe("npm run grade", () => {
  it("grades the reference solutions: all pass, exit 0, report written", async () => {
    const { code, out } = await grade("--target", "solutions");
    expect(out).toMatch(/grade: \d+ passed, 0 failed, 0 not started \(solutions\)/);
    expect(code).toBe(0);
    const report = JSON.parse(readFileSync(join(gradeDir, "report.json"), "utf8"));
    expect(report.target).toBe("solutions");
    expect(report.passed).toBe(report.total);
    expect(report.total).toBe(listExercises().length);
    // Chapter 8's exercises run against one cluster the grader starts, and say so while it starts.
    if (listExercises().some((e) => e.chapter === "08-cluster")) {
      expect(out).toContain("starting a cluster for chapter 8's exercises…");
      expect(out).toMatch(/cluster ready \(\d+(\.\d)? s\)/);
    }
    expect(leftBehind()).toEqual([]);
    // Every exercise of the course, one after the other, and a cluster: minutes on a loaded 2-core machine.
  }, 600_000);

  it("stops an endless loop at the time limit, names the exercise, and goes on to the next", async () => {
    const all = listExercises();
    const byId = (id: string) => all.find((e) => e.id === id)!;
    const target = join(scratch, "loops");
    const put = (ex: Exercise, file: string, text: string) => {
      const to = join(target, ex.chapter, basename(ex.dir), file);
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, text);
    };
    // At module level: the test file never finishes importing it.
    const selectors = byId("label-selectors");
    put(
      selectors,
      "selector.ts",
      `${readFileSync(join(root, selectors.dir, "selector.ts"), "utf8")}\nwhile (true) {}\n`,
    );
    // Inside the function a test calls.
    const prefix = byId("prefix-end");
    put(
      prefix,
      "prefix-end.ts",
      "export function prefixEnd(p: Uint8Array): Uint8Array {\n  while (true) {}\n}\n",
    );
    // A right answer beside them, graded in full.
    const txn = byId("txn-compare");
    put(txn, "compare.ts", readFileSync(join(root, txn.solutionDir, "compare.ts"), "utf8"));

    const started = Date.now();
    const { code, out } = await grade("--target", target, "--time-limit", "4");
    expect(code, out).toBe(1);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(out).toMatch(/✗ failed\s+0\.1 label-selectors\s+ran out of time \(limit 4 s\)/);
    expect(out).toMatch(/✗ failed\s+1\.2 prefix-end\s+ran out of time \(limit 4 s\)/);
    expect(out).toMatch(/✓ passed\s+1\.3 txn-compare\s+\d+\/\d+ tests/);
    expect(out).toMatch(/label-selectors ran out of time \(still running after 4 s\); going on/);
    expect(out).toMatch(/grade: 1 passed, 2 failed \(2 ran out of time\), 0 not started/);
    const report = JSON.parse(readFileSync(join(gradeDir, "report.json"), "utf8"));
    expect(report.exercises.map((e: { id: string; status: string }) => [e.id, e.status])).toEqual([
      ["label-selectors", "failed"],
      ["prefix-end", "failed"],
      ["txn-compare", "passed"],
    ]);
    expect(report.exercises[0].reason).toMatch(/^ran out of time \(limit 4 s\)/);
    expect(leftBehind()).toEqual([]);
  }, 120_000);

  it("refuses an unknown exercise with one line and exit 2", async () => {
    const { code, out } = await grade("no-such-exercise");
    expect(code).toBe(2);
    expect(out.trim()).toMatch(/^no chapter or exercise "no-such-exercise" — [^\n]*$/);
  }, 60_000);
});
