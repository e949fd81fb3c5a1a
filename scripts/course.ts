/**
 * The course's table of contents, read from the folders themselves.
 *
 * Solves: the sidebar, the chapter runner, the grader and the integrity test all need the list of
 * chapters and exercises. Reading it from `chapters/` and `exercises/` means adding a chapter or an
 * exercise is adding a folder — there is no hand-kept list to drift.
 *
 * Invariants:
 * - a chapter is a folder `chapters/NN-slug/` holding `index.md` (its first `# ` heading is its title);
 * - an exercise is a folder `exercises/NN-chapter/XX-name/`; its id is `name` (unique in the course);
 * - a test file named `*.optional.test.ts` is an optional part of its exercise: graded and shown,
 *   never counted as a failure (the exercise passes on its other test files).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";

export const root = resolve(import.meta.dirname, "..");

export interface Chapter {
  number: number;
  /** The folder name, e.g. `00-life-of-a-pod`. */
  dir: string;
  /** The folder name without its number, e.g. `life-of-a-pod`. */
  slug: string;
  title: string;
  path: string;
}

export interface Exercise {
  /** `label-selectors` — the folder name without its number. */
  id: string;
  chapter: string;
  chapterNumber: number;
  number: number;
  title: string;
  /** exercises/NN-chapter/XX-name */
  dir: string;
  /** solutions/NN-chapter/XX-name */
  solutionDir: string;
  /** The stub files the learner edits (non-test .ts files), as names relative to dir. */
  stubs: string[];
  tests: string[];
  /** The test files of an optional part (`*.optional.test.ts`, a subset of `tests`). */
  optionalTests?: string[];
  hints: string[];
}

const numbered = /^(\d{2})-([a-z0-9-]+)$/;

function numberedDirs(parent: string): { number: number; name: string; slug: string }[] {
  if (!existsSync(parent)) return [];
  return readdirSync(parent)
    .filter((name) => numbered.test(name) && statSync(join(parent, name)).isDirectory())
    .sort()
    .map((name) => {
      const [, n, slug] = numbered.exec(name)!;
      return { number: Number(n), name, slug };
    });
}

/** The first `# ` heading of a markdown file, outside code fences and front matter. */
export function firstHeading(markdown: string): string | undefined {
  let inFence = false;
  let inFrontMatter = markdown.startsWith("---");
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (inFrontMatter) {
      if (i > 0 && line.trim() === "---") inFrontMatter = false;
      continue;
    }
    if (line.startsWith("```")) inFence = !inFence;
    if (!inFence && line.startsWith("# ")) return line.slice(2).trim();
  }
  return undefined;
}

export function listChapters(base = root): Chapter[] {
  return numberedDirs(join(base, "chapters"))
    .filter((d) => existsSync(join(base, "chapters", d.name, "index.md")))
    .map((d) => {
      const path = join(base, "chapters", d.name);
      const title = firstHeading(readFileSync(join(path, "index.md"), "utf8")) ?? d.slug;
      return { number: d.number, dir: d.name, slug: d.slug, title, path };
    });
}

/** The hints of an exercise README: the `<details>` blocks under its `## Hints` heading. */
export function parseHints(readme: string): string[] {
  const at = readme.search(/^## Hints\s*$/m);
  if (at < 0) return [];
  const hints: string[] = [];
  const block = /<details>\s*<summary>([\s\S]*?)<\/summary>([\s\S]*?)<\/details>/g;
  for (const m of readme.slice(at).matchAll(block)) {
    // "Hint 2: carry the byte" → "carry the byte": the tools number hints themselves.
    const summary = m[1].trim().replace(/^Hint\s*\d+\s*[:.—-]?\s*/i, "");
    hints.push(summary ? `${summary}\n\n${m[2].trim()}` : m[2].trim());
  }
  return hints;
}

export function listExercises(base = root): Exercise[] {
  const result: Exercise[] = [];
  for (const ch of numberedDirs(join(base, "exercises"))) {
    for (const ex of numberedDirs(join(base, "exercises", ch.name))) {
      const rel = join("exercises", ch.name, ex.name);
      const files = readdirSync(join(base, rel));
      const readmePath = join(base, rel, "README.md");
      const readme = existsSync(readmePath) ? readFileSync(readmePath, "utf8") : "";
      result.push({
        id: ex.slug,
        chapter: ch.name,
        chapterNumber: ch.number,
        number: ex.number,
        title: firstHeading(readme) ?? ex.slug,
        dir: rel,
        solutionDir: join("solutions", ch.name, ex.name),
        stubs: files.filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts")).sort(),
        tests: files.filter((f) => f.endsWith(".test.ts")).sort(),
        optionalTests: files.filter((f) => f.endsWith(".optional.test.ts")).sort(),
        hints: parseHints(readme),
      });
    }
  }
  return result;
}

/** The recorded mistakes of an exercise and the stub file each one stands in for. */
export function listMistakes(ex: Exercise, base = root): { file: string; replaces: string }[] {
  const dir = join(base, ex.solutionDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /^wrong-.*\.ts$/.test(f))
    .sort()
    .map((file) => {
      const text = readFileSync(join(dir, file), "utf8");
      const named = /^\s*\/\/\s*@replaces\s+(\S+\.ts)\s*$/m.exec(text)?.[1];
      return { file, replaces: named ?? (ex.stubs.length === 1 ? ex.stubs[0] : "") };
    });
}

/**
 * Finds a chapter from what a learner types: `0`, `00`, `life-of-a-pod` or `00-life-of-a-pod`.
 */
export function findChapter(chapters: Chapter[], query: string): Chapter | undefined {
  const q = query.trim().toLowerCase();
  if (/^\d+$/.test(q)) return chapters.find((c) => c.number === Number(q));
  return chapters.find((c) => c.dir === q || c.slug === q);
}

/**
 * Finds an exercise from what a learner types: its id (`label-selectors`), its folder
 * (`01-label-selectors`, `00-life-of-a-pod/01-label-selectors`, `exercises/...`) or `0.1`.
 */
export function findExercise(exercises: Exercise[], query: string): Exercise | undefined {
  const q = query
    .trim()
    .replace(/\/+$/, "")
    .replace(/^exercises\//, "");
  const dotted = /^(\d+)\.(\d+)$/.exec(q);
  if (dotted) {
    return exercises.find((e) => e.chapterNumber === Number(dotted[1]) && e.number === Number(dotted[2]));
  }
  return exercises.find(
    (e) => e.id === q || basename(e.dir) === q || `${e.chapter}/${basename(e.dir)}` === q,
  );
}

/** The edit distance between two names (insertions, deletions and substitutions each cost 1). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length];
}

/** The name a learner probably meant (`lable-selectors` → `label-selectors`), if one is close. */
export function closest(query: string, names: string[]): string | undefined {
  const q = query.trim().toLowerCase();
  // A part of one name only (`etcd` → `etcd-watch`, `selectors` → `label-selectors`).
  const containing = [...new Set(names.filter((n) => q.length >= 3 && n.includes(q)))];
  if (containing.length === 1) return containing[0];
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = distance(q, name);
    if (d <= Math.max(2, Math.floor(name.length / 4)) && (!best || d < best.d)) best = { name, d };
  }
  return best?.name;
}
