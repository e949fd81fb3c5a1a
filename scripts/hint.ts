/**
 * `npm run hint -- <exercise-id>` — the next hint of an exercise; `--all` prints every hint.
 *
 *   npm run hint                           every exercise: id, chapter, title, hints seen
 *   npm run hint -- label-selectors        the next hint
 *   npm run hint -- label-selectors --all  every hint at once
 *   npm run hint -- label-selectors --reset  start again from hint 1
 *
 * Hints are the folded `<details>` blocks under the README's `## Hints` heading. Each call shows one
 * more (the count is kept in .grade/hints.json), so a learner takes only as much help as they need;
 * after the last one, no next hint is offered — the reference answer is.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { closest, type Exercise, findExercise, listChapters, listExercises } from "./course.ts";
import { gradeDir } from "./variants.ts";

const usage = "usage: npm run hint -- [<exercise-id> [--all | --reset]]";
const stateFile = join(gradeDir, "hints.json");

/** How many hints of each exercise the learner has seen, by exercise id. */
export function hintsSeen(): Record<string, number> {
  try {
    return existsSync(stateFile)
      ? (JSON.parse(readFileSync(stateFile, "utf8")) as Record<string, number>)
      : {};
  } catch {
    return {};
  }
}

/** Every exercise under its chapter, with the hints seen so far. */
export function listing(exercises: Exercise[], seen: Record<string, number>): string {
  const lines = ["Exercises (npm run hint -- <id> shows the next hint of one):"];
  const idWidth = Math.max(...exercises.map((e) => e.id.length));
  const titleWidth = Math.max(...exercises.map((e) => e.title.length));
  for (const ch of listChapters()) {
    const list = exercises.filter((e) => e.chapter === ch.dir);
    if (list.length === 0) continue;
    lines.push("", `Chapter ${ch.number}  ${ch.title}`);
    for (const e of list) {
      const hints = `hints seen ${Math.min(seen[e.id] ?? 0, e.hints.length)}/${e.hints.length}`;
      lines.push(
        `  ${`${e.chapterNumber}.${e.number}`.padEnd(5)} ${e.id.padEnd(idWidth)}  ${e.title.padEnd(titleWidth)}  ${hints}`,
      );
    }
  }
  return lines.join("\n");
}

function main(argv: string[]): number {
  const flags = argv.filter((a) => a.startsWith("-") && a !== "--");
  const words = argv.filter((a) => !a.startsWith("-"));
  const unknown = flags.filter((f) => f !== "--all" && f !== "--reset");
  const all = listExercises();
  if (unknown.length > 0 || words.length > 1) {
    console.error(unknown.length > 0 ? `unknown flag ${unknown[0]}\n${usage}` : usage);
    return 2;
  }
  if (words.length === 0) {
    if (flags.length > 0) {
      console.error(`${flags[0]} needs an exercise: ${usage}`);
      return 2;
    }
    console.log(listing(all, hintsSeen()));
    return 0;
  }
  const ex = findExercise(all, words[0]);
  if (!ex) {
    const near = closest(
      words[0],
      all.map((e) => e.id),
    );
    console.error(
      near
        ? `no exercise "${words[0]}" — did you mean ${near}? (\`npm run hint\` lists them)`
        : `no exercise "${words[0]}" — \`npm run hint\` lists them`,
    );
    return 2;
  }
  if (ex.hints.length === 0) {
    console.error(`${ex.dir}/README.md has no hints (expected <details> blocks under "## Hints")`);
    return 1;
  }
  const state = hintsSeen();
  const n = ex.hints.length;
  if (flags.includes("--reset")) {
    delete state[ex.id];
  } else if (flags.includes("--all")) {
    for (const [i, h] of ex.hints.entries()) console.log(`Hint ${i + 1}/${n} — ${h}\n`);
    console.log(`That is every hint. The reference answer is in ${ex.solutionDir}/.`);
    state[ex.id] = n;
  } else {
    const before = state[ex.id] ?? 0;
    const shown = Math.min(before + 1, n);
    state[ex.id] = shown;
    console.log(`Hint ${shown}/${n} — ${ex.hints[shown - 1]}\n`);
    if (shown < n) console.log(`(run it again for hint ${shown + 1})`);
    else if (before < n)
      console.log(`That was the last hint. The reference answer is in ${ex.solutionDir}/.`);
    else {
      console.log(
        `You have seen all ${n} hints (that was the last one again; --all shows every one, --reset starts over). The reference answer is in ${ex.solutionDir}/.`,
      );
    }
  }
  mkdirSync(gradeDir, { recursive: true });
  writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  if (flags.includes("--reset")) console.log(`hints for ${ex.id} start again from hint 1`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exit(main(process.argv.slice(2)));
