/**
 * One site page per file of `code/`: the file whole, as annotated source — its comments as prose
 * beside the code they explain.
 *
 * Solves: every chapter page says "see the code", and a learner who wants to read a component whole
 * needs somewhere to land that reads like a text, the way Docco's annotated source does. These pages
 * are generated at build time from `code/` (VitePress dynamic routes under docs/source/), so they
 * cannot drift and nothing generated is committed. Each page names what the file is, the chapter
 * that builds it, the upstream files that do the same job, and links the files it imports and the
 * files that import it, so a reader can walk the system.
 *
 * How a file becomes a page: the file is cut into sections at every comment that stands on its own
 * lines at the top level (a file header, a `//` paragraph between declarations, a doc comment) or
 * is a doc comment one level in (a class member's). Each section is that comment, rendered as markdown, beside
 * the code up to the next such comment, highlighted with line numbers that are the file's own.
 * Comments deeper inside a function stay in the code: they explain a line, not a step.
 *
 * Test harnesses, shared suites and benchmarks live in `testing/` folders (as upstream keeps
 * `pkg/storage/testing/`). They are real code with headers and upstream counterparts, so they keep
 * their pages — reachable from the upstream map's own section for them and from each other — but
 * they are off the learner's path: the "Read the code" list, the chapters' Upstream boxes and the
 * "imported by" lines of the other pages leave them out (`isTestingFile`).
 *
 * Invariants:
 * - a page exists for every non-test `.ts` file of `code/`, at any depth (code/a/b/c.ts →
 *   /docs/source/a/b/c), `testing/` folders included; `testdata/` (inputs for tests) has none;
 * - every line of the file appears on its page exactly once, in order, as prose or as numbered
 *   code — except the `#region` markers between sections, which only serve chapter pages.
 *
 * @upstream none — course tooling (in the spirit of Docco's annotated source)
 * @chapter 00-life-of-a-pod
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { root as courseRoot, listChapters } from "./course.ts";
import { parseHeader, sourceFiles } from "./headers.ts";

export interface SourcePage {
  /** code/store/mvcc/kvstore.ts */
  file: string;
  /** The path under docs/source/: ["store", "mvcc", "kvstore"], ["apiserver", "storage", "cacher"]. */
  segments: string[];
  url: string;
  markdown: string;
}

/** The deepest page path the dynamic routes under docs/source/ serve (folders + file name). */
export const maxDepth = 4;

/** A file under a `testing/` folder: a test harness, a shared suite or a benchmark. */
export function isTestingFile(file: string): boolean {
  return file.split("/").includes("testing");
}

/** The site URL of a code file's page, or undefined when it has none. */
export function sourceUrl(file: string): string | undefined {
  const m = /^code\/((?:[a-z0-9-]+\/)+)([a-z0-9.-]+)\.ts$/.exec(file);
  if (!m || file.endsWith(".test.ts") || file.includes("/testdata/")) return undefined;
  const segments = [...m[1].split("/").filter(Boolean), m[2]];
  return segments.length <= maxDepth ? `/docs/source/${segments.join("/")}` : undefined;
}

/** Relative `.ts` imports of a file, resolved to repository paths. */
export function importsOf(base: string, file: string): string[] {
  const text = readFileSync(join(base, file), "utf8");
  const found = new Set<string>();
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+\.ts)"/gm)) {
    const target = relative(base, resolve(base, dirname(file), m[1]));
    if (existsSync(join(base, target))) found.add(target);
  }
  return [...found].sort();
}

/** A path that may wrap after its slashes on a narrow screen (rather than mid-name). */
const wrappable = (path: string) => path.replace(/\//g, "/<wbr>");

/** A code file as inline code that wraps at its slashes, linked to its page when it has one. */
function link(file: string): string {
  const url = sourceUrl(file);
  const code = `<code>${wrappable(file)}</code>`;
  return url ? `<a href="${url}">${code}</a>` : code;
}

/**
 * The facts under a page's title, as a list of "name value" lines (a table would need a header
 * row it has nothing to put in, and could not wrap on a phone); `<br>` starts a continuation line.
 */
function facts(items: [name: string, value: string][]): string[] {
  return [
    '<div class="source-facts">',
    "",
    ...items.map(([name, value]) => `- <span class="source-fact">${name}</span> ${value}`),
    "",
    "</div>",
  ];
}

// #region sections
/** One step of an annotated page: the comment (markdown) and the code it introduces. */
export interface Section {
  prose: string[];
  /** The file's line number of `code[0]` (1-based). */
  codeStart: number;
  code: string[];
}

const indentOf = (line: string) => line.length - line.trimStart().length;
/**
 * A section starts at a comment at the top level, or at a doc comment (`/**`) one level in — a
 * class member's. Anything deeper, and `//` notes inside a body, explain a line and stay in the code.
 */
const sectionIndent = 2;
const isRegionMarker = (line: string) => /^\s*\/\/\s*#(end)?region\b/.test(line);

/** The text of a `/** … *\/` or `/* … *\/` block, without its stars. */
function blockCommentText(lines: string[]): string[] {
  const out = lines.map((line, i) => {
    let s = line.trim();
    if (i === 0) s = s.replace(/^\/\*\*?/, "");
    if (i === lines.length - 1) s = s.replace(/\*\/$/, "");
    // " * text" → "text", keeping any indentation after the star (nested lists, code).
    return s.replace(/^\* ?/, "").replace(/\s+$/, "");
  });
  while (out.length && out[0].trim() === "") out.shift();
  while (out.length && out[out.length - 1].trim() === "") out.pop();
  return out;
}

/** Cut a file into sections at its top-level comments (see the header of this file). */
export function annotate(text: string): Section[] {
  const lines = text.replace(/\n$/, "").split("\n");
  const sections: Section[] = [];
  let cur: Section = { prose: [], codeStart: 1, code: [] };
  const flush = () => {
    while (cur.code.length && cur.code[cur.code.length - 1].trim() === "") cur.code.pop();
    if (cur.prose.length || cur.code.length) sections.push(cur);
    cur = { prose: [], codeStart: 1, code: [] };
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trimStart();
    const topLevel = indentOf(line) <= sectionIndent;
    if (topLevel && isRegionMarker(line) && cur.code.every((l) => l.trim() === "")) {
      cur.code = [];
      continue;
    }
    if (topLevel && isRegionMarker(line)) {
      flush();
      continue;
    }
    let comment: string[] | undefined;
    if ((indentOf(line) === 0 && trimmed.startsWith("/*")) || (topLevel && trimmed.startsWith("/**"))) {
      let end = i;
      while (end < lines.length && !lines[end].includes("*/")) end++;
      // A block that closes on a line with code after it (`/** x */ foo()`) is code, not prose.
      if (end < lines.length && lines[end].trim().endsWith("*/")) {
        comment = blockCommentText(lines.slice(i, end + 1));
        i = end;
      }
    } else if (indentOf(line) === 0 && trimmed.startsWith("//") && !isRegionMarker(line)) {
      let end = i;
      while (end + 1 < lines.length && lines[end + 1].startsWith("//") && !isRegionMarker(lines[end + 1]))
        end++;
      comment = lines.slice(i, end + 1).map((l) => l.trimStart().replace(/^\/\/ ?/, ""));
      i = end;
    }
    if (comment) {
      if (cur.code.some((l) => l.trim() !== "")) flush();
      cur.code = [];
      if (cur.prose.length) cur.prose.push("");
      cur.prose.push(...comment);
      continue;
    }
    if (cur.code.length === 0) {
      if (line.trim() === "") continue;
      cur.codeStart = i + 1;
    }
    cur.code.push(line);
  }
  flush();
  return sections;
}
// #endregion sections

/** Prose goes into HTML: `<` outside inline code would open a tag, so it is escaped there. */
function escapeProse(line: string): string {
  return line
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/</g, "&lt;")))
    .join("");
}

/** Header tags become links: `@upstream repo path (names)` and `@chapter dir`. */
function proseLine(line: string, chapterLink: (dir: string) => string, upstreamLink: (l: string) => string) {
  const tag = /^@(upstream|chapter)\s+(.*)$/.exec(line.trim());
  if (!tag) return escapeProse(line);
  return tag[1] === "chapter"
    ? `- **Built in:** ${chapterLink(tag[2])}`
    : `- **Upstream:** ${upstreamLink(tag[2])}`;
}

function fence(code: string[]): string {
  const longest = Math.max(
    2,
    ...code.map((l) => (l.match(/`+/g) ?? []).reduce((m, s) => Math.max(m, s.length), 0)),
  );
  return "`".repeat(longest + 1);
}

/**
 * The pages of the last call per course root, with what they were made from. The site's three
 * dynamic routes (one per path depth) each ask for all pages, and VitePress bundles each route
 * file with its own copy of this module — so the cache lives on `globalThis`, and is used only
 * while no code file and no chapter has changed since (the dev server asks again after an edit).
 */
const cacheKey = Symbol.for("course.sourcePages");
type PagesCache = Map<string, { made: string; pages: SourcePage[] }>;

export function sourcePages(base = courseRoot): SourcePage[] {
  const files = sourceFiles(base).filter((f) => sourceUrl(f));
  const chapters = listChapters(base);
  const made = JSON.stringify([
    chapters,
    files.map((f) => {
      const st = statSync(join(base, f));
      return [f, st.mtimeMs, st.size];
    }),
  ]);
  const g = globalThis as { [cacheKey]?: PagesCache };
  g[cacheKey] ??= new Map();
  const cached = g[cacheKey].get(base);
  if (cached?.made === made) return cached.pages;
  const pages = makePages(base, files, chapters);
  g[cacheKey].set(base, { made, pages });
  return pages;
}

function makePages(base: string, files: string[], chapters: ReturnType<typeof listChapters>): SourcePage[] {
  const imports = new Map(files.map((f) => [f, importsOf(base, f)]));
  const chapterLink = (dir: string) => {
    const c = chapters.find((ch) => ch.dir === dir);
    return c ? `[${c.number}. ${c.title}](/chapters/${c.dir}/)` : dir;
  };
  return files.map((file) => {
    const text = readFileSync(join(base, file), "utf8");
    const header = parseHeader(text);
    const upstreamLink = (raw: string) => {
      const u = header?.upstream.find((x) => raw.includes(x.path));
      return u
        ? `[${u.path.replace(/^staging\/src\//, "")}](${u.url})${u.names ? ` — ${escapeProse(u.names)}` : ""}`
        : escapeProse(raw);
    };
    // A harness importing this file is not part of the learner's walk through the code.
    const importedBy = files.filter(
      (f) => imports.get(f)?.includes(file) && (isTestingFile(file) || !isTestingFile(f)),
    );
    const lines = [
      // The code is the page: no outline column beside it, so prose and code have room.
      "---",
      "aside: false",
      "pageClass: annotated-source",
      "---",
      "",
      `# ${basename(file)}`,
      "",
      header?.summary ? `> ${escapeProse(header.summary)}` : "",
      "",
      ...facts([
        [
          "file",
          `<code>${wrappable(file)}</code>${isTestingFile(file) ? " — a test harness or benchmark, off the learner's path" : ""}`,
        ],
        ["built in", header?.chapter ? chapterLink(header.chapter) : "—"],
        [
          "upstream",
          header?.upstream.length
            ? header.upstream
                .map(
                  (u) =>
                    `[${wrappable(u.path.replace(/^staging\/src\//, ""))}](${u.url})${u.names ? ` (${escapeProse(u.names)})` : ""}`,
                )
                .join("<br>")
            : `none — ${escapeProse(header?.noUpstream ?? "not stated")}`,
        ],
        ["imports", (imports.get(file) ?? []).map(link).join(", ") || "—"],
        ["imported by", importedBy.map(link).join(", ") || "—"],
      ]),
      "",
      "The file's comments are on the left, the code they explain on the right (stacked on a narrow",
      "screen); line numbers are the file's own.",
      "",
    ];
    for (const s of annotate(text)) {
      const f = fence(s.code);
      lines.push(
        '<div class="annotated-section">',
        '<div class="annotated-prose" v-pre>',
        "",
        ...s.prose.map((l) => proseLine(l, chapterLink, upstreamLink)),
        "",
        "</div>",
        '<div class="annotated-code">',
        "",
        ...(s.code.length ? [`${f}ts:line-numbers=${s.codeStart}`, ...s.code, f] : []),
        "",
        "</div>",
        "</div>",
        "",
      );
    }
    const url = sourceUrl(file)!;
    return { file, segments: url.split("/").slice(3), url, markdown: lines.join("\n") };
  });
}
