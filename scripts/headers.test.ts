import { describe, expect, it } from "vitest";
import { root } from "./course.ts";
import { parseHeader, upstreamMap } from "./headers.ts";

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
