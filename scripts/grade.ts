/**
 * `npm run grade` — grades the learner's exercises (or the reference solutions) and shows progress.
 *
 *   npm run grade                         every exercise
 *   npm run grade -- 1                    one chapter (number, folder or slug)
 *   npm run grade -- label-selectors      one exercise (id, folder, or 0.1)
 *   npm run grade -- --watch              re-grade on save, keeping to the exercise being edited
 *   npm run grade -- --target solutions   grade solutions/ instead of exercises/ (or any folder
 *                                         laid out like exercises/)
 *   npm run grade -- --time-limit 60      seconds each exercise's tests may run (default 30)
 *
 * Writes .grade/report.json; exits 0 only when every selected exercise passes, 1 when one does
 * not, 2 for a usage error.
 *
 * Invariants:
 * - grading always ends: a test file still running at the time limit (a learner's endless loop)
 *   is stopped from outside its worker, counted as failed with that reason, and the other
 *   exercises are graded all the same (see runVariants in variants.ts);
 * - an exercise is in exactly one state: passed, failed, or not started (every failure is a
 *   stub's TODO) — and the summary counts the three apart;
 * - an optional part (`*.optional.test.ts`) is graded and shown on its own line, and never decides
 *   the exercise's state, the summary or the exit code.
 *
 * @upstream none — course tooling (the watch mode follows rustlings' `rustlings watch`)
 * @chapter 00-life-of-a-pod
 */
import { existsSync, mkdirSync, readFileSync, statSync, watch, writeFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  closest,
  type Exercise,
  findChapter,
  findExercise,
  listChapters,
  listExercises,
  root,
} from "./course.ts";
import { clusterChapters, clusterTimeLimitMs, ownClusterTimeLimitMs } from "./grader-cluster.ts";
import { hintsSeen } from "./hint.ts";
import {
  type ClusterProgress,
  defaultTimeLimitMs,
  exerciseVariant,
  gradeDir,
  runVariants,
  seconds,
  summarize,
  summarizeFiles,
  type Target,
  targetDir,
  type VariantSummary,
} from "./variants.ts";

export type Status = "passed" | "failed" | "not started";

export interface ReportEntry {
  id: string;
  chapter: string;
  title: string;
  status: Status;
  /** Why a failed exercise failed: its first failing test, or that it ran out of time. */
  reason?: string;
  tests: { passed: number; failed: number };
  /** The optional part, when the exercise has one: graded, shown, never counted as failed. */
  optional?: { status: Status; tests: { passed: number; failed: number } };
}

export interface Report {
  /** "exercises", "solutions", or the folder graded. */
  target: string;
  passed: number;
  failed: number;
  notStarted: number;
  total: number;
  exercises: ReportEntry[];
}

interface Args {
  query?: string;
  watch: boolean;
  target: Target;
  timeLimitSeconds: number;
}

const usage =
  "usage: npm run grade -- [chapter | exercise-id] [--watch] [--target exercises|solutions|<folder>] [--time-limit <seconds>]";

/** The value of `--flag value` or `--flag=value`; advances `i` past a separate value. */
function flagValue(argv: string[], i: { at: number }): string | undefined {
  const a = argv[i.at];
  return a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i.at];
}

export function parseArgs(argv: string[]): Args | string {
  const args: Args = { watch: false, target: "exercises", timeLimitSeconds: defaultTimeLimitMs / 1000 };
  for (const i = { at: 0 }; i.at < argv.length; i.at++) {
    const a = argv[i.at];
    if (a === "--") continue;
    if (a === "--watch" || a === "-w") args.watch = true;
    else if (a === "--target" || a.startsWith("--target=")) {
      const v = flagValue(argv, i) ?? "";
      if (v === "exercises" || v === "solutions") args.target = v;
      else if (v !== "" && existsSync(v) && statSync(v).isDirectory()) args.target = resolve(v);
      else {
        return `--target must be "exercises", "solutions" or a folder laid out like exercises/ (there is no folder "${v}")\n${usage}`;
      }
    } else if (a === "--time-limit" || a.startsWith("--time-limit=")) {
      const v = Number(flagValue(argv, i));
      if (!Number.isFinite(v) || v <= 0) return `--time-limit takes a number of seconds above 0\n${usage}`;
      args.timeLimitSeconds = v;
    } else if (a === "--help" || a === "-h") return usage;
    else if (a.startsWith("-")) return `unknown flag ${a}\n${usage}`;
    else if (args.query === undefined) args.query = a;
    else return `one chapter or exercise at a time (got "${args.query}" and "${a}")\n${usage}`;
  }
  return args;
}

/** The exercises a query selects, or one line saying what to do instead. */
export function select(all: Exercise[], query: string | undefined): Exercise[] | string {
  if (query === undefined) return all;
  const ex = findExercise(all, query);
  if (ex) return [ex];
  const chapters = listChapters();
  const chapter = findChapter(chapters, query);
  if (chapter) {
    const inChapter = all.filter((e) => e.chapter === chapter.dir);
    return inChapter.length > 0
      ? inChapter
      : `chapter ${chapter.number} (${chapter.title}) has no exercises yet — \`npm run hint\` lists the exercises`;
  }
  const near = closest(query, [...all.map((e) => e.id), ...chapters.map((c) => c.slug)]);
  return `no chapter or exercise "${query}" — ${near ? `did you mean ${near}? ` : ""}\`npm run hint\` lists the exercises, \`npm run chapter\` the chapters`;
}

const color = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: number, s: string) => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
const green = (s: string) => paint(32, s);
const red = (s: string) => paint(31, s);
const dim = (s: string) => paint(2, s);
const bold = (s: string) => paint(1, s);

function bar(done: number, total: number, width = 20): string {
  const filled = total === 0 ? 0 : Math.round((done / total) * width);
  return `[${green("█".repeat(filled))}${dim("░".repeat(width - filled))}]`;
}

function indent(text: string, by: string): string {
  return text
    .split("\n")
    .map((l) => by + l)
    .join("\n");
}

function targetName(target: Target): string {
  if (target === "exercises" || target === "solutions") return target;
  const rel = relative(process.cwd(), target);
  return rel === "" ? "." : rel.startsWith("..") ? target : rel;
}

export function statusOf(r: VariantSummary, target: Target): Status {
  if (r.failed === 0 && r.passed > 0) return "passed";
  // A reference answer is finished by definition: a TODO in it is a failure of the course.
  return r.notStarted && target !== "solutions" ? "not started" : "failed";
}

/**
 * An exercise's results split into the part that counts and its optional part (its
 * `*.optional.test.ts` files), if it has one.
 */
export function partsOf(
  ex: Exercise,
  r: VariantSummary,
): { main: VariantSummary; optional?: VariantSummary } {
  const optional = (ex.optionalTests ?? []).map((t) => join(ex.dir, t));
  if (optional.length === 0) return { main: r };
  const required = ex.tests.map((t) => join(ex.dir, t)).filter((t) => !optional.includes(t));
  return { main: summarizeFiles(r, required), optional: summarizeFiles(r, optional) };
}

/** The optional part's line: passed, not started, or how far it got — never "failed". */
function optionalLine(part: VariantSummary, target: Target): string {
  const status = statusOf(part, target);
  if (status === "passed")
    return `${green("✓")} optional part passed ${dim(`(${part.passed}/${part.total} tests)`)}`;
  if (status === "not started")
    return dim("· optional part not started (it does not count against the exercise)");
  const why = part.timedOut
    ? `ran out of time (limit ${seconds(part.timedOut.limitMs)})`
    : `${part.passed}/${part.total} tests`;
  return `${dim("○")} optional part: ${why} ${dim("(optional: not counted as failed)")}`;
}

/** What the grader knows beside the results: the whole course, and the hints already seen. */
export interface RenderContext {
  /** Every exercise of the course (default: read from exercises/), to tell a part of a chapter from all of it. */
  course?: Exercise[];
  /** Hints seen per exercise id (default: none). */
  hintsSeen?: Record<string, number>;
  /** Show failure details for this exercise only (watch mode); default: for every failed one. */
  detailFor?: string;
}

/** The line that points at more help: the next hint while there is one, else the answer. */
function hintLine(ex: Exercise, seen: number): string | undefined {
  const n = ex.hints.length;
  if (n === 0) return undefined;
  if (seen < n) return `next hint (${seen + 1} of ${n}): npm run hint -- ${ex.id}`;
  return `all ${n} hints seen (npm run hint -- ${ex.id} --all shows them again); the reference answer is in ${ex.solutionDir}/`;
}

/** The progress lines at the top: one bar per chapter, or a heading when one exercise is graded. */
function chapterLines(
  exercises: Exercise[],
  results: Map<string, VariantSummary>,
  course: Exercise[],
): string[] {
  const chapters = listChapters();
  const chapterDirs = [...new Set(exercises.map((e) => e.chapter))];
  const nameOf = (dir: string) => {
    const ch = chapters.find((c) => c.dir === dir);
    return ch ? `Chapter ${ch.number}  ${ch.title}` : dir;
  };
  const inCourse = (dir: string, selected: number) =>
    Math.max(course.filter((e) => e.chapter === dir).length, selected);
  // One exercise of a chapter that has more: a bar would show the chapter as "0/1".
  if (exercises.length === 1 && inCourse(exercises[0].chapter, 1) > 1) {
    const [ex] = exercises;
    const of = inCourse(ex.chapter, 1);
    return [
      `${bold(nameOf(ex.chapter))} — exercise ${ex.chapterNumber}.${ex.number} only, one of ${of} (npm run grade -- ${ex.chapterNumber} grades the chapter)`,
    ];
  }
  const rows = chapterDirs.map((dir) => {
    const list = exercises.filter((e) => e.chapter === dir);
    const passed = list.filter(
      (e) => results.get(e.id)?.failed === 0 && (results.get(e.id)?.passed ?? 0) > 0,
    ).length;
    const of = inCourse(dir, list.length);
    return {
      dir,
      passed,
      total: list.length,
      part: of > list.length ? ` (${list.length} of its ${of} exercises graded)` : "",
    };
  });
  // The bar comes first, so it lines up whatever a chapter's title is.
  const countWidth = Math.max(...rows.map((r) => `${r.passed}/${r.total}`.length));
  return rows.map(
    (r) =>
      `${bar(r.passed, r.total)} ${`${r.passed}/${r.total}`.padStart(countWidth)}  ${bold(nameOf(r.dir))}${dim(r.part)}`,
  );
}

export function render(
  exercises: Exercise[],
  results: Map<string, VariantSummary>,
  target: Target,
  ctx: RenderContext = {},
): { text: string; report: Report } {
  const course = ctx.course ?? listExercises();
  const seen = ctx.hintsSeen ?? {};
  const parts = new Map(exercises.map((ex) => [ex.id, partsOf(ex, results.get(ex.id)!)]));
  const counted = new Map(exercises.map((ex) => [ex.id, parts.get(ex.id)!.main]));
  const lines: string[] = [...chapterLines(exercises, counted, course), ""];
  const entries: ReportEntry[] = [];
  let timedOut = 0;
  for (const ex of exercises) {
    const r = counted.get(ex.id)!;
    const optional = parts.get(ex.id)!.optional;
    const status = statusOf(r, target);
    const label = `${ex.chapterNumber}.${ex.number} ${ex.id}`.padEnd(32);
    const details = ctx.detailFor === undefined || ctx.detailFor === ex.id;
    let reason: string | undefined;
    if (status === "passed") {
      lines.push(`  ${green("✓ passed     ")} ${label} ${dim(`${r.passed}/${r.total} tests`)}`);
    } else if (status === "not started") {
      lines.push(`  ${dim("· not started")} ${label} ${dim(`start with ${ex.dir}/README.md`)}`);
    } else if (r.timedOut) {
      timedOut++;
      const limit = seconds(r.timedOut.limitMs);
      reason = `ran out of time (limit ${limit}): ${r.timedOut.file} was still running`;
      lines.push(`  ${red("✗ failed     ")} ${label} ${red(`ran out of time (limit ${limit})`)}`);
      if (details) {
        lines.push(
          `      ${r.timedOut.file} was still running after ${limit}: an endless loop, or a wait that never ends?`,
        );
        const longer = Math.max(60, (r.timedOut.limitMs / 1000) * 2);
        const again = target === "exercises" ? "" : ` --target ${targetName(target)}`;
        lines.push(dim(`      (to allow longer: npm run grade -- ${ex.id}${again} --time-limit ${longer})`));
      }
    } else {
      reason = r.firstFailure ? `${r.firstFailure.test}: ${r.firstFailure.error.split("\n")[0]}` : undefined;
      lines.push(`  ${red("✗ failed     ")} ${label} ${dim(`${r.passed}/${r.total} tests`)}`);
      if (details && r.firstFailure) {
        lines.push(indent(`${r.firstFailure.test}`, "      "));
        lines.push(indent(r.firstFailure.error, "        "));
      }
    }
    if (optional) lines.push(`      ${optionalLine(optional, target)}`);
    if (status === "failed" && details && target !== "solutions") {
      const hint = hintLine(ex, seen[ex.id] ?? 0);
      if (hint) lines.push(`      ${hint}`);
    }
    entries.push({
      id: ex.id,
      chapter: ex.chapter,
      title: ex.title,
      status,
      ...(reason ? { reason } : {}),
      tests: { passed: r.passed, failed: r.failed },
      ...(optional
        ? {
            optional: {
              status: statusOf(optional, target),
              tests: { passed: optional.passed, failed: optional.failed },
            },
          }
        : {}),
    });
  }
  const count = (s: Status) => entries.filter((e) => e.status === s).length;
  const report: Report = {
    target: targetName(target),
    passed: count("passed"),
    failed: count("failed"),
    notStarted: count("not started"),
    total: entries.length,
    exercises: entries,
  };
  const failed = `${report.failed} failed${timedOut > 0 ? ` (${timedOut} ran out of time)` : ""}`;
  lines.push("");
  lines.push(
    `grade: ${report.passed} passed, ${failed}, ${report.notStarted} not started (${report.target})`,
  );
  return { text: lines.join("\n"), report };
}

/** The progress line for the grader's cluster (chapter 8's exercises run against it). */
export function clusterLine(line: ClusterProgress): string {
  if (line.phase === "starting") return dim("starting a cluster for chapter 8's exercises…");
  if (line.phase === "ready")
    return dim(`cluster ready (${seconds(line.ms ?? 0)}); running chapter 8's exercises against it`);
  return red(`✗ the cluster for chapter 8's exercises did not start: ${line.message ?? "(no message)"}`);
}

export interface GradeOptions {
  timeLimitMs?: number;
  signal?: AbortSignal;
}

export async function grade(
  exercises: Exercise[],
  target: Target,
  opts: GradeOptions = {},
): Promise<{ text: string; report: Report; results: Map<string, VariantSummary> }> {
  const variants = exercises.map((e) => exerciseVariant(e, target));
  const records = await runVariants(variants, {
    label: `grade-${process.pid}`,
    timeLimitMs: opts.timeLimitMs,
    signal: opts.signal,
    onTimeout: (v, file, limitMs) =>
      console.error(
        red(`✗ ${v.exercise} ran out of time (still running after ${seconds(limitMs)}); going on (${file})`),
      ),
    onCluster: (line) => console.error(clusterLine(line)),
  });
  const results = new Map(variants.map((v) => [v.exercise, summarize(records, v)]));
  const out = render(exercises, results, target, { hintsSeen: hintsSeen() });
  mkdirSync(gradeDir, { recursive: true });
  writeFileSync(join(gradeDir, "report.json"), `${JSON.stringify(out.report, null, 2)}\n`);
  return { ...out, results };
}

/** The part of an exercise README a learner needs on screen: everything before the hints. */
function task(ex: Exercise): string {
  const readme = readFileSync(join(root, ex.dir, "README.md"), "utf8");
  const cut = readme.search(/^## Hints\s*$/m);
  return (cut < 0 ? readme : readme.slice(0, cut)).trim();
}

/** The exercise a saved file belongs to (`file` is relative to the watched folder `watched`). */
export function exerciseOfChange(
  exercises: Exercise[],
  target: Target,
  watched: string,
  file: string,
): Exercise | undefined {
  const path = resolve(watched, file);
  return exercises.find((ex) => {
    const rel = relative(targetDir(ex, target), path);
    return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
  });
}

export interface WatchState {
  /** The exercise on screen: the one being edited, or the next unfinished one. */
  focus?: string;
  /** The exercise whose task (its README) was printed last. */
  taskShown?: string;
}

/**
 * Where watch mode looks after a run. The exercise the learner edited takes the focus (they have
 * its README open already, so it is not printed again); a save elsewhere (code/) keeps it; when
 * the focused exercise passes, the next unfinished one after it comes up with its task.
 */
export function nextFocus(
  state: WatchState,
  report: { exercises: { id: string; status: string }[] },
  edited: string | undefined,
): { focus?: string; showTask: boolean; passed?: string } {
  const list = report.exercises;
  const unfinished = (i: number) => list[i] && list[i].status !== "passed";
  if (edited && list.some((e) => e.id === edited)) {
    const i = list.findIndex((e) => e.id === edited);
    if (unfinished(i)) return { focus: edited, showTask: false };
    state = { ...state, focus: edited };
  }
  const at = list.findIndex((e) => e.id === state.focus);
  if (at >= 0 && unfinished(at)) return { focus: state.focus, showTask: false };
  // Start from the focused exercise, then wrap round to the ones before it.
  const order = at < 0 ? list : [...list.slice(at + 1), ...list.slice(0, at)];
  const next = order.find((e) => e.status !== "passed")?.id;
  return {
    focus: next,
    showTask: next !== undefined && next !== state.taskShown,
    ...(at >= 0 ? { passed: state.focus } : {}),
  };
}

async function watchMode(exercises: Exercise[], target: Target, timeLimitMs: number): Promise<never> {
  let state: WatchState = {};
  let edited: string | undefined;
  let dirty = true;
  let wake: (() => void) | undefined;
  let controller: AbortController | undefined;
  const onChange = (watched: string) => (_: string, file: string | null) => {
    if (file && !file.endsWith(".ts") && !file.endsWith(".md")) return;
    const ex = file ? exerciseOfChange(exercises, target, watched, file) : undefined;
    if (ex) edited = ex.id;
    dirty = true;
    // A save while grading makes that run stale: stop it and grade again.
    controller?.abort(new Error("a file changed"));
    wake?.();
  };
  const targetRoot = target === "exercises" || target === "solutions" ? join(root, target) : target;
  for (const dir of [targetRoot, join(root, "code")]) watch(dir, { recursive: true }, onChange(dir));
  for (;;) {
    while (!dirty) await new Promise<void>((r) => (wake = r));
    // An editor's save is often several writes: let them land, then grade once.
    await new Promise((r) => setTimeout(r, 150));
    dirty = false;
    const editedNow = edited;
    edited = undefined;
    controller = new AbortController();
    console.log(dim("\ngrading …"));
    try {
      const { report, results } = await grade(exercises, target, { timeLimitMs, signal: controller.signal });
      const move = nextFocus(state, report, editedNow);
      const focus = exercises.find((e) => e.id === move.focus);
      // Details (the first failure, the hint) for the exercise in focus only: one thing at a time.
      const { text } = render(exercises, results, target, {
        hintsSeen: hintsSeen(),
        detailFor: move.focus ?? "",
      });
      process.stdout.write("\x1b[2J\x1b[H");
      console.log(text);
      console.log("");
      if (move.passed) console.log(green(`✓ ${move.passed} passes.`));
      if (!focus) console.log(green("Every selected exercise passes. On to the next chapter!"));
      else if (move.showTask) {
        console.log(bold(`Next: ${focus.title}  (${focus.dir})`));
        console.log("");
        console.log(indent(task(focus), "  "));
      } else {
        console.log(
          bold(`Working on ${focus.chapterNumber}.${focus.number} ${focus.id}`) +
            dim(` — the task: ${focus.dir}/README.md`),
        );
      }
      state = { focus: move.focus, taskShown: move.showTask ? move.focus : state.taskShown };
      console.log(
        dim(`\nwatching ${targetName(target)}/ and code/ — save a file to re-grade; Ctrl-C to stop`),
      );
    } catch (err) {
      if (controller.signal.aborted) {
        // Stopped for a newer save: grade again, keeping what was edited.
        edited ??= editedNow;
        continue;
      }
      console.error(red(`grading failed: ${(err as Error).message}`));
    }
  }
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (typeof args === "string") {
    console.error(args);
    return 2;
  }
  let all = listExercises();
  if (args.target !== "exercises" && args.target !== "solutions" && args.query === undefined) {
    // A copy of the exercises may hold only some of them: grade what is there.
    const dir = args.target;
    all = all.filter((e) => existsSync(targetDir(e, dir)));
    if (all.length === 0) {
      console.error(`${targetName(dir)} holds no exercise folders (NN-chapter/XX-name/) — ${usage}`);
      return 2;
    }
  }
  const selected = select(all, args.query);
  if (typeof selected === "string") {
    console.error(selected);
    return 2;
  }
  const timeLimitMs = args.timeLimitSeconds * 1000;
  if (args.watch) return watchMode(selected, args.target, timeLimitMs);
  console.error(
    dim(
      `grading ${selected.length} exercise(s) in ${targetName(args.target)}/ (time limit ${seconds(timeLimitMs)} each${
        selected.some((e) => clusterChapters.includes(e.chapter))
          ? `, ${seconds(Math.max(timeLimitMs, clusterTimeLimitMs))} for those on the grader's cluster, ${seconds(
              Math.max(timeLimitMs, ownClusterTimeLimitMs),
            )} for one that starts its own`
          : ""
      }) …`,
    ),
  );
  const { text, report } = await grade(selected, args.target, { timeLimitMs });
  console.log(text);
  console.log(dim(`report: ${relative(process.cwd(), join(gradeDir, "report.json"))}`));
  return report.passed === report.total ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`npm run grade: ${(err as Error).message}`);
      process.exit(2);
    },
  );
}
