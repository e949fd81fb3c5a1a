/**
 * `npm run grade` — grades the learner's exercises (or the reference solutions) and shows progress.
 *
 *   npm run grade                         every exercise
 *   npm run grade -- 1                    one chapter (number, folder or slug)
 *   npm run grade -- label-selectors      one exercise (id, folder, or 0.1)
 *   npm run grade -- --watch              re-run on save, always showing the next unfinished exercise
 *   npm run grade -- --target solutions   grade solutions/ instead of exercises/
 *
 * Writes .grade/report.json; exits 0 only when every selected exercise passes.
 *
 * @upstream none — course tooling (the watch mode follows rustlings' `rustlings watch`)
 * @chapter 00-life-of-a-pod
 */
import { mkdirSync, readFileSync, watch, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Exercise, findChapter, findExercise, listChapters, listExercises, root } from "./course.ts";
import { exerciseVariant, gradeDir, runVariants, summarize, type VariantSummary } from "./variants.ts";

type Target = "exercises" | "solutions";

export interface ReportEntry {
  id: string;
  chapter: string;
  title: string;
  status: "passed" | "failed";
  tests: { passed: number; failed: number };
}

export interface Report {
  target: Target;
  passed: number;
  total: number;
  exercises: ReportEntry[];
}

interface Args {
  query?: string;
  watch: boolean;
  target: Target;
}

const usage = "usage: npm run grade -- [chapter | exercise-id] [--watch] [--target exercises|solutions]";

export function parseArgs(argv: string[]): Args | string {
  const args: Args = { watch: false, target: "exercises" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") continue;
    if (a === "--watch" || a === "-w") args.watch = true;
    else if (a === "--target" || a.startsWith("--target=")) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i];
      if (v !== "exercises" && v !== "solutions")
        return `--target must be "exercises" or "solutions", not "${v ?? ""}"\n${usage}`;
      args.target = v;
    } else if (a === "--help" || a === "-h") return usage;
    else if (a.startsWith("-")) return `unknown flag ${a}\n${usage}`;
    else if (args.query === undefined) args.query = a;
    else return `one chapter or exercise at a time (got "${args.query}" and "${a}")\n${usage}`;
  }
  return args;
}

/** The exercises a query selects, or a message listing what exists. */
export function select(all: Exercise[], query: string | undefined): Exercise[] | string {
  if (query === undefined) return all;
  const ex = findExercise(all, query);
  if (ex) return [ex];
  const chapter = findChapter(listChapters(), query);
  if (chapter) {
    const inChapter = all.filter((e) => e.chapter === chapter.dir);
    return inChapter.length > 0
      ? inChapter
      : `chapter ${chapter.number} (${chapter.title}) has no exercises yet`;
  }
  const ids = all.map((e) => `  ${e.chapterNumber}.${e.number}  ${e.id}`).join("\n");
  return `no chapter or exercise "${query}". Exercises:\n${ids}`;
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

export function render(
  exercises: Exercise[],
  results: Map<string, VariantSummary>,
  target: Target,
): { text: string; report: Report } {
  const lines: string[] = [];
  const entries: ReportEntry[] = [];
  const chapters = listChapters();
  const chapterDirs = [...new Set(exercises.map((e) => e.chapter))];
  const passedOf = (list: Exercise[]) => list.filter((e) => results.get(e.id)?.failed === 0).length;
  for (const dir of chapterDirs) {
    const list = exercises.filter((e) => e.chapter === dir);
    const ch = chapters.find((c) => c.dir === dir);
    const name = ch ? `Chapter ${ch.number}  ${ch.title}` : dir;
    lines.push(
      `${bold(name.padEnd(44))} ${bar(passedOf(list), list.length)} ${passedOf(list)}/${list.length}`,
    );
  }
  lines.push("");
  for (const ex of exercises) {
    const r = results.get(ex.id)!;
    const passed = r.failed === 0 && r.passed > 0;
    entries.push({
      id: ex.id,
      chapter: ex.chapter,
      title: ex.title,
      status: passed ? "passed" : "failed",
      tests: { passed: r.passed, failed: r.failed },
    });
    const label = `${ex.chapterNumber}.${ex.number} ${ex.id}`.padEnd(32);
    const counts = dim(`${r.passed}/${r.total} tests`);
    if (passed) lines.push(`  ${green("✓ passed     ")} ${label} ${counts}`);
    else if (r.notStarted && target === "exercises") {
      lines.push(`  ${dim("· not started")} ${label} ${dim(`start with ${ex.dir}/README.md`)}`);
    } else {
      lines.push(`  ${red("✗ failed     ")} ${label} ${counts}`);
      if (r.firstFailure) {
        lines.push(indent(`${r.firstFailure.test}`, "      "));
        lines.push(indent(r.firstFailure.error, "        "));
      }
      if (target === "exercises") lines.push(`      next hint: npm run hint -- ${ex.id}`);
    }
  }
  const passedCount = entries.filter((e) => e.status === "passed").length;
  lines.push("");
  lines.push(`grade: ${passedCount} passed, ${entries.length - passedCount} failed (${target})`);
  return {
    text: lines.join("\n"),
    report: { target, passed: passedCount, total: entries.length, exercises: entries },
  };
}

export async function grade(
  exercises: Exercise[],
  target: Target,
): Promise<{ text: string; report: Report }> {
  const variants = exercises.map((e) => exerciseVariant(e, target));
  const records = await runVariants(variants, { label: `grade-${target}` });
  const results = new Map(variants.map((v) => [v.exercise, summarize(records, v)]));
  const out = render(exercises, results, target);
  mkdirSync(gradeDir, { recursive: true });
  writeFileSync(join(gradeDir, "report.json"), `${JSON.stringify(out.report, null, 2)}\n`);
  return out;
}

/** The part of an exercise README a learner needs on screen: everything before the hints. */
function task(ex: Exercise): string {
  const readme = readFileSync(join(root, ex.dir, "README.md"), "utf8");
  const cut = readme.search(/^## Hints\s*$/m);
  return (cut < 0 ? readme : readme.slice(0, cut)).trim();
}

async function watchMode(exercises: Exercise[], target: Target): Promise<void> {
  let running = false;
  let again = false;
  const run = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const { text, report } = await grade(exercises, target);
      process.stdout.write("\x1b[2J\x1b[H");
      console.log(text);
      const next = report.exercises.find((e) => e.status === "failed");
      console.log("");
      if (next) {
        const ex = exercises.find((e) => e.id === next.id)!;
        console.log(bold(`Next: ${ex.title}  (${ex.dir})`));
        console.log("");
        console.log(indent(task(ex), "  "));
      } else {
        console.log(green("Every selected exercise passes. On to the next chapter!"));
      }
      console.log(dim(`\nwatching exercises/ and code/ — save a file to re-grade; Ctrl-C to stop`));
    } catch (err) {
      console.error(red(`grading failed: ${(err as Error).message}`));
    } finally {
      running = false;
      if (again) {
        again = false;
        void run();
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const onChange = (_: string, file: string | null) => {
    if (file && !file.endsWith(".ts") && !file.endsWith(".md")) return;
    clearTimeout(timer);
    timer = setTimeout(() => void run(), 150);
  };
  for (const dir of [target, "code"]) watch(join(root, dir), { recursive: true }, onChange);
  await run();
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (typeof args === "string") {
    console.error(args);
    return 2;
  }
  const selected = select(listExercises(), args.query);
  if (typeof selected === "string") {
    console.error(selected);
    return 2;
  }
  if (args.watch) {
    await watchMode(selected, args.target);
    return new Promise(() => {});
  }
  console.error(dim(`grading ${selected.length} exercise(s) in ${args.target}/ …`));
  const { text, report } = await grade(selected, args.target);
  console.log(text);
  console.log(dim(`report: .grade/report.json`));
  return report.passed === report.total ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(`npm run grade: ${(err as Error).message}`);
      process.exit(2);
    },
  );
}
