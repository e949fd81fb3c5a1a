// Every link in every exercise README must work where a learner reads it: in an editor or on
// GitHub (exercises are not site pages). So a link is a relative path to a file that exists, and
// its #anchor names a heading of that file as GitHub and editors spell anchors.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { listExercises, root } from "./course.ts";

/** Inline links and reference definitions, outside code fences and code spans. */
function markdownLinks(markdown: string): string[] {
  const prose = markdown
    .replace(/^```[\s\S]*?^```/gm, "")
    .replace(/`[^`\n]*`/g, "")
    .replace(/<!--[\s\S]*?-->/g, "");
  const inline = [...prose.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (m) => m[1],
  );
  const defined = [...prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm)].map((m) => m[1]);
  const html = [...prose.matchAll(/<a\s[^>]*href="([^"]+)"/g)].map((m) => m[1]);
  return [...inline, ...defined, ...html];
}

/** The anchors of a markdown file's headings, as GitHub (and VS Code) make them: github-slugger. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fence = !fence;
    const m = !fence && /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = m[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .replace(/[`*]/g, "")
      .replace(/(^|\s)_+|_+(\s|$)/g, "$1$2");
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe("anchors as GitHub spells them", () => {
  it("lower-cases, drops punctuation, keeps digits first, and numbers repeats", () => {
    const a = headingAnchors(
      "# T\n## 410 Expired, and why it exists\n### Optimistic concurrency: 409 Conflict\n## `prev_kv` and *you*\n## Run it\n## Run it\n```\n# not a heading\n```\n",
    );
    expect([...a]).toEqual([
      "t",
      "410-expired-and-why-it-exists",
      "optimistic-concurrency-409-conflict",
      "prev_kv-and-you",
      "run-it",
      "run-it-1",
    ]);
  });

  it("finds inline links and definitions, not code", () => {
    expect(
      markdownLinks(
        'See [a](../x.md#y) and [b](./b.md "t").\n```\n[no](z.md)\n```\n`[no](w.md)`\n[r]: ./r.md\n',
      ),
    ).toEqual(["../x.md#y", "./b.md", "./r.md"]);
  });
});

describe.each(listExercises())("links in $dir/README.md", (ex) => {
  const readmePath = join(root, ex.dir, "README.md");
  const readme = readFileSync(readmePath, "utf8");
  const links = markdownLinks(readme).filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l));

  it("link to its chapter", () => {
    expect(
      links.some((l) => l.split("#")[0].endsWith(`chapters/${ex.chapter}/index.md`)),
      links.join("\n"),
    ).toBe(true);
  });

  it.each(links)("%s resolves to a file and a heading", (link) => {
    const [path, anchor] = link.split("#", 2);
    expect(path.startsWith("/"), `${link}: a site-only path; link the .md file relative to the README`).toBe(
      false,
    );
    const file = path === "" ? readmePath : join(dirname(readmePath), decodeURIComponent(path));
    expect(existsSync(file) && statSync(file).isFile(), `${link}: no file ${relative(root, file)}`).toBe(
      true,
    );
    if (anchor !== undefined && file.endsWith(".md")) {
      const anchors = headingAnchors(readFileSync(file, "utf8"));
      expect([...anchors], `${link}: no heading #${anchor} in ${relative(root, file)}`).toContain(anchor);
    }
  });
});
