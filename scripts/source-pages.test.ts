import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { root } from "./course.ts";
import { sourceFiles } from "./headers.ts";
import { annotate, importsOf, sourcePages, sourceUrl } from "./source-pages.ts";

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
    expect(page.markdown).toMatch(
      /\| imports \|.*\[`code\/store\/mvcc\/revision\.ts`\]\(\/docs\/source\/store\/mvcc\/revision\)/,
    );
    expect(page.markdown).toMatch(/\| imported by \|.*code\/store\/mvcc\/kvstore\.ts/);
    expect(page.markdown).toMatch(
      /\| upstream \| \[server\/mvcc\/key_index\.go\]\(https:\/\/github\.com\/etcd-io\/etcd\/blob\//,
    );
    expect(page.markdown).toContain("**Built in:** [1. ");
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
