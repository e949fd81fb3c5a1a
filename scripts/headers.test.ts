import { describe, expect, it } from "vitest";
import { root } from "./course.ts";
import { firstSentence, inlineMarkdown, parseHeader, upstreamMap } from "./headers.ts";

describe("file headers", () => {
  it("give the summary, every upstream file with its names, and the chapter", () => {
    const h = parseHeader(`/**
 * KeyIndex — every revision at which one key changed.
 *
 * @upstream etcd-io/etcd server/storage/mvcc/key_index.go (keyIndex, generation)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go
 * @chapter 01-etcd-watch
 */
export {};`);
    expect(h).toEqual({
      summary: "KeyIndex — every revision at which one key changed.",
      chapter: "01-etcd-watch",
      upstream: [
        {
          repo: "etcd-io/etcd",
          path: "server/storage/mvcc/key_index.go",
          names: "keyIndex, generation",
          url: "https://github.com/etcd-io/etcd/blob/v3.5.17/server/storage/mvcc/key_index.go",
        },
        {
          repo: "kubernetes/kubernetes",
          path: "staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go",
          names: "",
          url: "https://github.com/kubernetes/kubernetes/blob/v1.32.0/staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go",
        },
      ],
    });
  });

  it("may say there is no upstream counterpart, and why", () => {
    expect(parseHeader("/**\n * Course tooling.\n * @upstream none — course tooling\n */")?.noUpstream).toBe(
      "course tooling",
    );
    expect(parseHeader("// no JSDoc\nexport {};")).toBeUndefined();
  });
});

describe("the upstream map", () => {
  const rows = upstreamMap(root);

  it("covers every file in code/ (the map is generated from their headers)", () => {
    const missing = rows.filter((r) => r.upstream.length === 0 && !r.noUpstream).map((r) => r.file);
    expect(
      missing,
      "add an `@upstream <repo> <path> (names)` or `@upstream none — why` line to the header",
    ).toEqual([]);
  });

  it("names the chapter that builds each file", () => {
    const without = rows.filter((r) => !/^\d{2}-[a-z0-9-]+$/.test(r.chapter ?? "")).map((r) => r.file);
    expect(without, "add `@chapter NN-slug` to the header").toEqual([]);
  });
});

describe("a header's summary", () => {
  it("is the whole first sentence, over as many lines as it takes", () => {
    const h = parseHeader(`/**
 * WatchableStore — the store plus its watchers, fed from \`kvstore.ts\` (e.g. on every
 * write) at etcd v3.5 speed. Mirrors k8s.io/apiserver.
 *
 * @chapter 01-etcd-watch
 */`);
    expect(h?.summary).toBe(
      "WatchableStore — the store plus its watchers, fed from `kvstore.ts` (e.g. on every write) at etcd v3.5 speed.",
    );
    expect(firstSentence("Pod validation — is this pod runnable? The spec as a whole.")).toBe(
      "Pod validation — is this pod runnable?",
    );
    expect(firstSentence("String checks — is this a DNS label? — each returning a list.")).toBe(
      "String checks — is this a DNS label? — each returning a list.",
    );
    expect(firstSentence('Maintenance — "who are you, and how are you?"')).toBe(
      'Maintenance — "who are you, and how are you?"',
    );
    // A header whose first paragraph runs into a list stops before the list.
    expect(
      parseHeader("/**\n * The patch handler — one of four languages:\n * - json\n * - merge\n */")?.summary,
    ).toBe("The patch handler — one of four languages:");
  });

  it("is shown as markdown: inline code as code, everything else escaped", () => {
    expect(inlineMarkdown("Revision — `{ main, sub }` of a <Kind>List, **bold** and *em*")).toBe(
      "Revision — <code>{ main, sub }</code> of a &lt;Kind&gt;List, <strong>bold</strong> and <em>em</em>",
    );
    expect(inlineMarkdown("`a < b` and SetDefaults_* and 2*3*4")).toBe(
      "<code>a &lt; b</code> and SetDefaults_* and 2*3*4",
    );
  });

  it("ends a sentence for every file of code/ (none stops mid-sentence at a line break)", () => {
    const cut = upstreamMap(root)
      .filter((r) => !/[.?!:]["”’)]*$/.test(r.summary))
      .map((r) => `${r.file}: ${r.summary}`);
    expect(cut).toEqual([]);
  });
});
