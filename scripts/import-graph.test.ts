import { describe, expect, it } from "vitest";
import { root } from "./course.ts";
import { type ImportRule, importCycles, importGraph, ruleViolations, sourceFiles } from "./import-graph.ts";

const components = [
  "code/client/",
  "code/controllers/",
  "code/scheduler/",
  "code/leaderelection/",
  "code/kubelet/",
];
const outsideCode = ["chapters/", "exercises/", "solutions/", "scripts/", "docs/"];

// DESIGN.md, "Who may import whom (as upstream's process boundaries)".
const rules: ImportRule[] = [
  {
    from: "code/store/",
    mayNot: ["code/api/", "code/quota/", "code/apiserver/", ...components, "code/cmd/"],
    why: "the store knows keys, bytes and revisions — no Kubernetes types, no API server",
  },
  {
    from: "code/api/",
    mayNot: ["code/store/", "code/quota/", "code/apiserver/", ...components, "code/cmd/"],
    why: "object types are shared by every layer and depend on none",
  },
  // Quota evaluation (ResourceQuota admission and the resource quota controller share it, as
  // upstream's k8s.io/apiserver pkg/quota/v1): pure functions over code/api/ types only.
  {
    from: "code/quota/",
    mayNot: ["code/store/", "code/apiserver/", ...components, "code/cmd/"],
    why: "quota evaluation is shared by the API server and the controllers, so it may depend on neither",
  },
  // chapter 8: component-base's tracing — every component and the API server use it, so it
  // may use none of them (object types at most).
  {
    from: "code/tracing/",
    mayNot: [
      "code/store/",
      "code/quota/",
      "code/apiserver/",
      ...components,
      "code/cmd/",
      "code/pki/",
      "code/testing/",
    ],
    why: "tracing is shared by every component and the API server, so it may depend on none of them",
  },
  {
    from: "code/apiserver/",
    mayNot: [...components, "code/cmd/"],
    why: "the API server knows no client library and no component",
  },
  ...components.map((c) => ({
    from: c,
    mayNot: ["code/apiserver/", "code/store/", "code/cmd/"],
    why: "components talk to the API server over HTTP through code/client/, as client-go users do",
  })),
  { from: "code/", mayNot: outsideCode, why: "nothing in code/ imports the course around it" },
];

describe("import graph of code/", () => {
  const graph = importGraph(root, sourceFiles(root, "code"));

  it("reads the imports of every file", () => {
    expect(graph.size).toBeGreaterThan(100);
    const kvstore = [...graph.keys()].find((f) => f.endsWith("kvstore.ts"));
    expect(kvstore && graph.get(kvstore)!.length).toBeGreaterThan(0);
  });

  it("has no import circle, type-only imports included", () => {
    expect(importCycles(graph).map((c) => c.join(", "))).toEqual([]);
  });

  it("keeps upstream's process boundaries", () => {
    expect(ruleViolations(graph, rules)).toEqual([]);
  });
});

describe("the checks themselves", () => {
  it("find a circle of two files and a self-import, and not a chain", () => {
    const g = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["a.ts", "c.ts"]],
      ["c.ts", ["d.ts"]],
      ["d.ts", []],
      ["e.ts", ["e.ts"]],
    ]);
    expect(importCycles(g)).toEqual([["a.ts", "b.ts"], ["e.ts"]]);
  });

  it("find an edge across a boundary", () => {
    const g = new Map([["code/store/x.ts", ["code/apiserver/y.ts", "code/store/z.ts"]]]);
    expect(ruleViolations(g, rules)).toHaveLength(1);
  });
});
