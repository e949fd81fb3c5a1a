import { describe, expect, it } from "vitest";
import { root } from "./course.ts";
import { sourceFiles } from "./headers.ts";
import { importsOf, sourcePages, sourceUrl } from "./source-pages.ts";

describe("source pages", () => {
  it("have a URL for every non-test file directly in a folder of code/", () => {
    expect(sourceUrl("code/store/key-index.ts")).toBe("/docs/source/store/key-index");
    expect(sourceUrl("code/store/key-index.test.ts")).toBeUndefined();
    expect(sourceUrl("code/store/testdata/crash-writer.ts")).toBeUndefined();
    const pages = sourcePages();
    const expected = sourceFiles(root).filter((f) => /^code\/[^/]+\/[^/]+\.ts$/.test(f));
    expect(pages.map((p) => p.file)).toEqual(expected);
  });

  it("embed the file with a snippet import and link its imports and importers", () => {
    const page = sourcePages().find((p) => p.file === "code/store/key-index.ts")!;
    expect(page.markdown).toContain("<<< @/code/store/key-index.ts{ts:line-numbers}");
    expect(importsOf(root, "code/store/key-index.ts")).toContain("code/store/revision.ts");
    expect(page.markdown).toMatch(
      /\| imports \|.*\[`code\/store\/revision\.ts`\]\(\/docs\/source\/store\/revision\)/,
    );
    expect(page.markdown).toMatch(/\| imported by \|.*code\/store\/kvstore\.ts/);
    expect(page.markdown).toMatch(
      /\| upstream \| \[server\/mvcc\/key_index\.go\]\(https:\/\/github\.com\/etcd-io\/etcd\/blob\//,
    );
  });
});
