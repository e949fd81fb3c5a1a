/**
 * One site page per file of `code/`: the file whole, with its header facts and its neighbours.
 *
 * Solves: every chapter page says "see the code", and a learner who wants to read a component whole
 * needs somewhere to land. These pages are generated at build time from `code/` (VitePress dynamic
 * routes, docs/source/[dir]/[file].paths.ts), so they cannot drift and nothing generated is committed.
 * Each page names what the file is, the chapter that builds it, the upstream files that do the same
 * job, and links the files it imports and the files that import it, so a reader can walk the system.
 *
 * Invariants:
 * - a page exists for every non-test `.ts` file directly in a folder of `code/` (code/<dir>/<file>.ts);
 * - the code on a page is embedded with a snippet import, never copied.
 *
 * @upstream none — course tooling (in the spirit of Docco's annotated source)
 * @chapter 00-life-of-a-pod
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { root as courseRoot, listChapters } from "./course.ts";
import { parseHeader, sourceFiles } from "./headers.ts";

export interface SourcePage {
  /** code/store/kvstore.ts */
  file: string;
  /** Route params: docs/source/<dir>/<name> */
  dir: string;
  name: string;
  url: string;
  markdown: string;
}

/** The site URL of a code file's page, or undefined when it has none. */
export function sourceUrl(file: string): string | undefined {
  const m = /^code\/([a-z0-9-]+)\/([a-z0-9.-]+)\.ts$/.exec(file);
  return m && !file.endsWith(".test.ts") ? `/docs/source/${m[1]}/${m[2]}` : undefined;
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

function link(file: string): string {
  const url = sourceUrl(file);
  return url ? `[\`${file}\`](${url})` : `\`${file}\``;
}

export function sourcePages(base = courseRoot): SourcePage[] {
  const files = sourceFiles(base).filter((f) => sourceUrl(f));
  const chapters = listChapters(base);
  const imports = new Map(files.map((f) => [f, importsOf(base, f)]));
  return files.map((file) => {
    const header = parseHeader(readFileSync(join(base, file), "utf8"));
    const chapter = chapters.find((c) => c.dir === header?.chapter);
    const importedBy = files.filter((f) => imports.get(f)?.includes(file));
    const lines = [
      // The code is the page: no outline column beside it, so long lines have room.
      "---",
      "aside: false",
      "---",
      "",
      `# ${basename(file)}`,
      "",
      header?.summary ? `> ${header.summary}` : "",
      "",
      "| | |",
      "|---|---|",
      `| file | \`${file}\` |`,
      `| built in | ${chapter ? `[${chapter.number}. ${chapter.title}](/chapters/${chapter.dir}/)` : (header?.chapter ?? "—")} |`,
      `| upstream | ${
        header?.upstream.length
          ? header.upstream
              .map(
                (u) =>
                  `[${u.path.replace(/^staging\/src\//, "")}](${u.url}) ${u.names ? `(${u.names})` : ""}`,
              )
              .join("<br>")
          : `none — ${header?.noUpstream ?? "not stated"}`
      } |`,
      `| imports | ${(imports.get(file) ?? []).map(link).join(", ") || "—"} |`,
      `| imported by | ${importedBy.map(link).join(", ") || "—"} |`,
      "",
      `<<< @/${file}{ts:line-numbers}`,
      "",
    ];
    const url = sourceUrl(file)!;
    const [, , , dir, name] = url.split("/");
    return { file, dir, name, url, markdown: lines.join("\n") };
  });
}
