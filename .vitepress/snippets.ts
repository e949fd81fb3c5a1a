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
 * Every embedded block also says where it comes from: a caption above it names the file, the
 * region and the file's line numbers, and links the file's annotated-source page — so a reader
 * can go from the piece a chapter shows to the whole file.
 *
 * @upstream none — course tooling (works around vuejs/vitepress src/node/markdown/plugins/snippet.ts)
 * @chapter 00-life-of-a-pod
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { relative, resolve } from "node:path";

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
  const range = regionRange(source, region);
  return range && source.split("\n").slice(range.first - 1, range.last);
}

/** The file's 1-based line numbers of the first and last line inside a region, or null. */
export function regionRange(source: string, region: string): { first: number; last: number } | null {
  const lines = source.split("\n");
  for (const m of markers) {
    const start = lines.findIndex((l) => m.start.exec(l.trim())?.[1] === region);
    if (start < 0) continue;
    const end = lines.findIndex((l, i) => i > start && m.end.exec(l.trim())?.[1] === region);
    return end < 0 ? null : { first: start + 2, last: end };
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

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");

/** The caption above an embedded block: file (linked to its page, when it has one), region, lines. */
export function snippetCaption(
  srcDir: string,
  file: string,
  region: string,
  url: string | undefined,
): string {
  const name = `<code>${escapeHtml(file)}</code>`;
  const parts = [url ? `<a href="${escapeHtml(url)}">${name}</a>` : name];
  if (region) parts.push(`<span class="snippet-region">#${escapeHtml(region)}</span>`);
  const path = resolve(srcDir, file);
  const range = region && existsSync(path) ? regionRange(readFileSync(path, "utf8"), region) : null;
  if (range) parts.push(`<span class="snippet-lines">lines ${range.first}–${range.last}</span>`);
  return `<div class="snippet-source">${parts.join(" · ")}</div>`;
}

type FenceRule = (tokens: { src?: [string, string] }[], idx: number, ...rest: never[]) => string;

/**
 * The markdown-it hook that puts the caption above every `<<<` block. Installed after VitePress's
 * snippet plugin, which marks each embedded block's token with `src` = [absolute path, region].
 */
export function snippetCaptions(
  md: { renderer: { rules: Record<string, unknown> } },
  srcDir: string,
  urlOf: (file: string) => string | undefined,
): void {
  const fence = md.renderer.rules.fence as FenceRule;
  md.renderer.rules.fence = ((tokens, idx, ...rest) => {
    const html = fence(tokens, idx, ...rest);
    const src = tokens[idx].src;
    if (!src) return html;
    const file = relative(srcDir, src[0]).split("\\").join("/");
    return snippetCaption(srcDir, file, src[1] ?? "", urlOf(file)) + html;
  }) satisfies FenceRule;
}
