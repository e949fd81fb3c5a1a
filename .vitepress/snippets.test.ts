import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { createMarkdownRenderer } from "vitepress";
import { describe, expect, it } from "vitest";
import config from "./config.ts";
import { checkPage, checkSnippet, findSnippetRefs, regionLines, regionRange } from "./snippets.ts";

const root = resolve(import.meta.dirname, "..");

function pages(dir = root): string[] {
  const skip = new Set(["node_modules", "code", "exercises", "solutions", ".git", ".grade", ".test-results"]);
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (skip.has(name) || name === "dist" || name === "cache") return [];
    if (statSync(p).isDirectory()) return pages(p);
    return name.endsWith(".md") ? [p] : [];
  });
}

describe("snippet references", () => {
  it("are found outside code fences only", () => {
    const md = "<<< @/code/a.ts#one\n```md\n<<< @/code/b.ts#two\n```\n  <<< @/code/c.ts{2-3}\n";
    expect(findSnippetRefs(md)).toEqual([
      { line: 1, file: "code/a.ts", region: "one" },
      { line: 5, file: "code/c.ts", region: "" },
    ]);
  });

  it("resolve regions by exact name, and require the end marker", () => {
    const src = "a\n  // #region sync\n  x()\n  // #endregion sync\n// #region open\ny\n";
    expect(regionLines(src, "sync")).toEqual(["  x()"]);
    expect(regionLines(src, "syn")).toBeNull();
    expect(regionLines(src, "open")).toBeNull();
  });

  it("report a missing file, a missing region and an empty region", () => {
    expect(checkSnippet(root, { file: "code/nope.ts", region: "" })).toMatch(/does not exist/);
    expect(checkSnippet(root, { file: ".vitepress/snippets.ts", region: "bogus" })).toMatch(
      /region "bogus" is not in .vitepress\/snippets.ts/,
    );
    expect(checkSnippet(root, { file: ".vitepress/snippets.ts", region: "" })).toBeNull();
  });

  it("in every page of the site point at real files and regions", () => {
    const problems = pages().flatMap((p) => checkPage(root, relative(root, p), readFileSync(p, "utf8")));
    expect(problems).toEqual([]);
  });

  it("make the site's own markdown renderer throw on a bogus region, naming page and line", async () => {
    const md = await createMarkdownRenderer(root, config.markdown, "/");
    const env = { path: join(root, "docs/x.md"), relativePath: "docs/x.md" };
    expect(() => md.render("# x\n\n<<< @/.vitepress/snippets.ts#no-such-region\n", env)).toThrow(
      /docs\/x\.md:3: <<< @\/.vitepress\/snippets.ts#no-such-region: region "no-such-region" is not in/,
    );
    expect(() => md.render("<<< @/code/missing.ts\n", env)).toThrow(/file code\/missing.ts does not exist/);
  });

  it("caption every embedded block with its file (linked to its annotated page), region and lines", async () => {
    const md = await createMarkdownRenderer(root, config.markdown, "/");
    const env = { path: join(root, "docs/x.md"), relativePath: "docs/x.md" };
    const chapter = readFileSync(join(root, "chapters/01-etcd-watch/index.md"), "utf8");
    const ref = findSnippetRefs(chapter).find((r) => r.file.startsWith("code/") && r.region)!;
    const range = regionRange(readFileSync(join(root, ref.file), "utf8"), ref.region)!;
    const html = md.render(`# x\n\n<<< @/${ref.file}#${ref.region}\n`, env);
    const page = `/docs/source/${ref.file.slice("code/".length, -".ts".length)}`;
    expect(html).toContain(
      `<div class="snippet-source"><a href="${page}"><code>${ref.file}</code></a> · ` +
        `<span class="snippet-region">#${ref.region}</span> · ` +
        `<span class="snippet-lines">lines ${range.first}–${range.last}</span></div><div class="language-ts`,
    );
    // A plain fenced block is not an embed and gets no caption.
    expect(md.render("```ts\nconst x = 1;\n```\n", env)).not.toContain("snippet-source");
  });
});
