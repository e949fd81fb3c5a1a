/**
 * Snippet imports that cannot silently go wrong.
 *
 * Solves: VitePress 1.6.4 embeds `<<< @/code/file.ts#region` by searching the file for the region;
 * when the region does not exist it quietly embeds the WHOLE file, and when the file does not exist
 * it crashes with a bare ENOENT. A chapter page must never drift from the code it explains, so a
 * missing file or region is a build error that names the page, the line and the fix.
 *
 * The region markers we accept are the ones VitePress finds in TypeScript and markdown files:
 * `// #region name` … `// #endregion name` and `<!-- #region name -->` … `<!-- #endregion name -->`.
 *
 * @upstream none — course tooling (works around vuejs/vitepress src/node/markdown/plugins/snippet.ts)
 * @chapter 00-life-of-a-pod
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";

export interface SnippetRef {
  /** 1-based line of the `<<<` in the page. */
  line: number;
  /** As written after `@/`, e.g. `code/api/labels.ts`. */
  file: string;
  region: string;
}

const markers = [
  { start: /^\/\/ ?#?region ([\w*-]+)$/, end: /^\/\/ ?#?endregion ([\w*-]+)$/ },
  { start: /^<!-- #?region ([\w*-]+) -->$/, end: /^<!-- #?endregion ([\w*-]+) -->$/ },
];

/** Every `<<< @/path#region` in a markdown page, outside fenced code blocks. */
export function findSnippetRefs(markdown: string): SnippetRef[] {
  const refs: SnippetRef[] = [];
  let fence: string | null = null;
  markdown.split("\n").forEach((text, i) => {
    const fenceMark = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fenceMark) {
      if (fence === null) fence = fenceMark;
      else if (fenceMark.startsWith(fence)) fence = null;
      return;
    }
    if (fence !== null) return;
    const m = /^\s{0,3}<<<\s*@\/([^\s#{[]+)(?:#([\w-]+))?/.exec(text);
    if (m) refs.push({ line: i + 1, file: m[1], region: m[2] ?? "" });
  });
  return refs;
}

/** The lines strictly inside a region, or null when the region is missing or never closed. */
export function regionLines(source: string, region: string): string[] | null {
  const lines = source.split("\n");
  for (const m of markers) {
    const start = lines.findIndex((l) => m.start.exec(l.trim())?.[1] === region);
    if (start < 0) continue;
    const end = lines.findIndex((l, i) => i > start && m.end.exec(l.trim())?.[1] === region);
    return end < 0 ? null : lines.slice(start + 1, end);
  }
  return null;
}

/** Why a snippet reference is broken, or null when it embeds something real. */
export function checkSnippet(srcDir: string, ref: Pick<SnippetRef, "file" | "region">): string | null {
  const path = resolve(srcDir, ref.file);
  if (!existsSync(path) || !statSync(path).isFile()) {
    return `file ${ref.file} does not exist`;
  }
  if (!ref.region) return null;
  const lines = regionLines(readFileSync(path, "utf8"), ref.region);
  if (lines === null) {
    return `region "${ref.region}" is not in ${ref.file} (add "// #region ${ref.region}" … "// #endregion ${ref.region}" there, or fix the name)`;
  }
  if (lines.every((l) => l.trim() === "")) return `region "${ref.region}" in ${ref.file} is empty`;
  return null;
}

/** All broken references in one page, as messages naming the page and line. */
export function checkPage(srcDir: string, pagePath: string, markdown: string): string[] {
  return findSnippetRefs(markdown).flatMap((ref) => {
    const problem = checkSnippet(srcDir, ref);
    return problem
      ? [`${pagePath}:${ref.line}: <<< @/${ref.file}${ref.region ? `#${ref.region}` : ""}: ${problem}`]
      : [];
  });
}

/** The markdown-it hook the site installs: a broken `<<<` throws, which fails `vitepress build`. */
export function snippetChecks(
  md: { core: { ruler: { before: (...a: never[]) => void } } },
  srcDir: string,
): void {
  const ruler = md.core.ruler as unknown as {
    before: (
      name: string,
      rule: string,
      fn: (state: { src: string; env?: Record<string, string> }) => void,
    ) => void;
  };
  // Runs before VitePress's snippet plugin renders anything, so the error names the page and line
  // instead of embedding the whole file (missing region) or crashing with ENOENT (missing file).
  ruler.before("normalize", "check-snippets", (state) => {
    const page = state.env?.relativePath ?? state.env?.path ?? "(page)";
    const problems = checkPage(srcDir, page, state.src);
    if (problems.length > 0) {
      throw new Error(`broken code snippet import:\n  ${problems.join("\n  ")}`);
    }
  });
}
