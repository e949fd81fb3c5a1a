/**
 * `npm run hint -- <exercise-id>` — the next hint of an exercise; `--all` prints every hint.
 *
 * Hints are the folded `<details>` blocks under the README's `## Hints` heading. Each call shows one
 * more (the count is kept in .grade/hints.json), so a learner takes only as much help as they need.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findExercise, listExercises } from "./course.ts";
import { gradeDir } from "./variants.ts";

const usage = "usage: npm run hint -- <exercise-id> [--all | --reset]";
const stateFile = join(gradeDir, "hints.json");

function loadState(): Record<string, number> {
  try {
    return existsSync(stateFile)
      ? (JSON.parse(readFileSync(stateFile, "utf8")) as Record<string, number>)
      : {};
  } catch {
    return {};
  }
}

function main(argv: string[]): number {
  const flags = argv.filter((a) => a.startsWith("-"));
  const words = argv.filter((a) => !a.startsWith("-"));
  const unknown = flags.filter((f) => f !== "--all" && f !== "--reset");
  if (words.length !== 1 || unknown.length > 0) {
    console.error(unknown.length > 0 ? `unknown flag ${unknown[0]}\n${usage}` : usage);
    return 2;
  }
  const all = listExercises();
  const ex = findExercise(all, words[0]);
  if (!ex) {
    console.error(`no exercise "${words[0]}". Exercises: ${all.map((e) => e.id).join(", ")}`);
    return 2;
  }
  if (ex.hints.length === 0) {
    console.error(`${ex.dir}/README.md has no hints (expected <details> blocks under "## Hints")`);
    return 1;
  }
  const state = loadState();
  if (flags.includes("--reset")) {
    delete state[ex.id];
  } else if (flags.includes("--all")) {
    for (const [i, h] of ex.hints.entries()) console.log(`Hint ${i + 1}/${ex.hints.length} — ${h}\n`);
    state[ex.id] = ex.hints.length;
  } else {
    const shown = Math.min((state[ex.id] ?? 0) + 1, ex.hints.length);
    state[ex.id] = shown;
    console.log(`Hint ${shown}/${ex.hints.length} — ${ex.hints[shown - 1]}\n`);
    if (shown < ex.hints.length) console.log(`(run it again for hint ${shown + 1})`);
    else console.log(`That was the last hint. The reference answer is in ${ex.solutionDir}/.`);
  }
  mkdirSync(gradeDir, { recursive: true });
  writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  if (flags.includes("--reset")) console.log(`hints for ${ex.id} start again from hint 1`);
  return 0;
}

process.exit(main(process.argv.slice(2)));
