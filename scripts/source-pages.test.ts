import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { upstreamMapRows } from "../docs/upstream-map.data.ts";
import { root } from "./course.ts";
import { sourceFiles } from "./headers.ts";
import { annotate, importsOf, isTestingFile, sourcePages, sourceUrl } from "./source-pages.ts";

/** The facts list under a page's title, as { name → value } (see `facts` in source-pages.ts). */
function factsOf(markdown: string): Record<string, string> {
  const block = /<div class="source-facts">\n\n([\s\S]*?)\n\n<\/div>/.exec(markdown)?.[1] ?? "";
  return Object.fromEntries(
    block.split("\n").map((l) => {
      const m = /^- <span class="source-fact">([^<]+)<\/span> (.*)$/.exec(l);
      return m ? [m[1], m[2]] : ["?", l];
    }),
  );
}

describe("source pages", () => {
  it("have a URL for every non-test file of code/, at any depth", () => {
    expect(sourceUrl("code/store/mvcc/key-index.ts")).toBe("/docs/source/store/mvcc/key-index");
    expect(sourceUrl("code/apiserver/storage/cacher.ts")).toBe("/docs/source/apiserver/storage/cacher");
    expect(sourceUrl("code/store/mvcc/key-index.test.ts")).toBeUndefined();
    expect(sourceUrl("code/store/wal/testdata/crash-writer.ts")).toBeUndefined();
    const pages = sourcePages();
    expect(pages.map((p) => p.file)).toEqual(sourceFiles(root));
    expect(new Set(pages.map((p) => p.url)).size).toBe(pages.length);
  });

  it("link the file's imports, importers, chapter and upstream files", () => {
    const page = sourcePages().find((p) => p.file === "code/store/mvcc/key-index.ts")!;
    expect(importsOf(root, "code/store/mvcc/key-index.ts")).toContain("code/store/mvcc/revision.ts");
    const facts = factsOf(page.markdown);
    const plain = (html: string) => html.replace(/<wbr>/g, "");
    expect(plain(facts.file)).toBe("<code>code/store/mvcc/key-index.ts</code>");
    expect(plain(facts.imports)).toContain(
      '<a href="/docs/source/store/mvcc/revision"><code>code/store/mvcc/revision.ts</code></a>',
    );
    expect(plain(facts["imported by"])).toMatch(/code\/store\/mvcc\/kvstore\.ts/);
    expect(plain(facts.upstream)).toMatch(
      /^\[server\/mvcc\/key_index\.go\]\(https:\/\/github\.com\/etcd-io\/etcd\/blob\//,
    );
    expect(facts["built in"]).toMatch(/^\[1\. /);
    expect(page.markdown).toContain("**Built in:** [1. ");
  });

  it("open with the file's facts as a list, not a table with an empty header row", () => {
    for (const page of sourcePages()) {
      expect(Object.keys(factsOf(page.markdown)), page.file).toEqual([
        "file",
        "built in",
        "upstream",
        "imports",
        "imported by",
      ]);
      expect(page.markdown, page.file).not.toMatch(/^\| \| \|$/m);
    }
  });

  it("put every line of every file on its page once, in order, as prose or numbered code", () => {
    for (const file of sourceFiles(root)) {
      const lines = readFileSync(join(root, file), "utf8").replace(/\n$/, "").split("\n");
      const sections = annotate(lines.join("\n"));
      let next = 1;
      for (const s of sections) {
        if (!s.code.length) continue;
        expect(s.codeStart, file).toBeGreaterThanOrEqual(next);
        // The numbered code is the file's own lines at those numbers.
        expect(s.code, `${file}:${s.codeStart}`).toEqual(
          lines.slice(s.codeStart - 1, s.codeStart - 1 + s.code.length),
        );
        // What was skipped between two code blocks is comments, region markers and blank lines only.
        for (const skipped of lines.slice(next - 1, s.codeStart - 1)) {
          expect(skipped, `${file}: a code line fell out`).toMatch(/^\s*(\/\/|\/\*|\*|$)|\*\/\s*$/);
        }
        next = s.codeStart + s.code.length;
      }
      for (const skipped of lines.slice(next - 1))
        expect(skipped, file).toMatch(/^\s*(\/\/|\/\*|\*|$)|\*\/\s*$/);
    }
  });

  it("turn top-level comments into prose and leave comments inside functions in the code", () => {
    const sections = annotate(
      [
        "/**",
        " * Header: `a < b` stays code.",
        " *",
        " * @chapter 01-etcd-watch",
        " */",
        'import x from "./x.ts";',
        "",
        "// #region step",
        "// Why the next function exists.",
        "export function f() {",
        "  // a line-level note stays with its line",
        "  return 1;",
        "}",
        "// #endregion step",
      ].join("\n"),
    );
    expect(sections).toHaveLength(2);
    expect(sections[0].prose[0]).toBe("Header: `a < b` stays code.");
    expect(sections[0].codeStart).toBe(6);
    expect(sections[1].prose).toEqual(["Why the next function exists."]);
    expect(sections[1].codeStart).toBe(10);
    expect(sections[1].code).toContain("  // a line-level note stays with its line");
    const page = sourcePages().find((p) => p.file === "code/store/mvcc/revision.ts")!;
    expect(page.markdown).toMatch(/```+ts:line-numbers=\d+/);
    expect(page.markdown).toContain('<div class="annotated-prose" v-pre>');
  });
});

describe("testing/ folders (test harnesses, shared suites, benchmarks)", () => {
  // A synthetic course: a learner's file, a harness that imports it (store/testing/), a shared suite
  // (apiserver/testing/), and test inputs (testdata/, which never get a page).
  const base = mkdtempSync(join(tmpdir(), "source-pages-"));
  const header = (summary: string, chapter: string) =>
    `/**\n * ${summary}\n *\n * @upstream none — a fixture\n * @chapter ${chapter}\n */\n`;
  const files: Record<string, string> = {
    "chapters/01-etcd-watch/index.md": "# etcd: MVCC and watch\n",
    "chapters/02-apiserver/index.md": "# The API server\n",
    "code/store/kvstore.ts": `${header("KVStore — the store.", "01-etcd-watch")}export const kv = 1;\n`,
    "code/store/testing/differential.ts": `${header("Differential testing — ours against etcd.", "01-etcd-watch")}import { kv } from "../kvstore.ts";\nexport const d = kv;\n`,
    "code/apiserver/testing/storage-suite.ts": `${header("Storage suite — every backend's tests.", "02-apiserver")}export const s = 1;\n`,
    "code/store/testdata/crash-writer.ts": `${header("A crash writer.", "01-etcd-watch")}export const c = 1;\n`,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(base, path)), { recursive: true });
    writeFileSync(join(base, path), text);
  }

  it("are told apart by a path segment named testing", () => {
    expect(isTestingFile("code/store/testing/differential.ts")).toBe(true);
    expect(isTestingFile("code/apiserver/testing/storage-suite.ts")).toBe(true);
    expect(isTestingFile("code/store/kvstore.ts")).toBe(false);
    expect(isTestingFile("code/store/testingtools.ts")).toBe(false);
    expect(isTestingFile("code/store/mvcc/testing-notes.ts")).toBe(false);
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it("keep their pages, but the learner's pages do not list them as importers", () => {
    const pages = sourcePages(base);
    expect(pages.map((p) => p.file).sort()).toEqual([
      "code/apiserver/testing/storage-suite.ts",
      "code/store/kvstore.ts",
      "code/store/testing/differential.ts",
    ]);
    const kv = pages.find((p) => p.file === "code/store/kvstore.ts")!;
    expect(factsOf(kv.markdown)["imported by"]).toBe("—");
    const harness = pages.find((p) => p.file === "code/store/testing/differential.ts")!;
    expect(harness.url).toBe("/docs/source/store/testing/differential");
    expect(factsOf(harness.markdown).file).toMatch(/off the learner's path/);
    expect(factsOf(harness.markdown).imports).toContain('href="/docs/source/store/kvstore"');
  });

  it("are left out of the upstream map's learner rows, into a section of their own", () => {
    const rows = upstreamMapRows(base);
    expect(rows.filter((r) => r.testing).map((r) => r.file)).toEqual([
      "code/apiserver/testing/storage-suite.ts",
      "code/store/testing/differential.ts",
    ]);
    expect(rows.filter((r) => !r.testing).map((r) => r.file)).toEqual(["code/store/kvstore.ts"]);
    // Each still links its page, so the map stays one-to-one.
    expect(rows.every((r) => r.url)).toBe(true);
  });
});
