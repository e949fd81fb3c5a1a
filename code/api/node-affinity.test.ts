// Node affinity matching (component-helpers' nodeaffinity): each operator, matchFields on the
// node's name, empty terms, the lazy selector's error reporting, preferred weights.
import { describe, expect, it } from "vitest";
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from "./core.ts";
import {
  getRequiredNodeAffinity,
  LazyErrorNodeSelector,
  NodeSelector,
  PreferredSchedulingTerms,
} from "./node-affinity.ts";

const node = (name: string, labels: Record<string, string> = {}): Node => ({
  apiVersion: "v1",
  kind: "Node",
  metadata: { name, labels },
});
const expr = (key: string, operator: NodeSelectorRequirement["operator"], values?: string[]) => ({
  matchExpressions: [{ key, operator, ...(values ? { values } : {}) }],
});
const lazyMatch = (terms: NodeSelectorTerm[], n: Node) =>
  new LazyErrorNodeSelector({ nodeSelectorTerms: terms }).match(n);

describe("matchExpressions", () => {
  const gpu = node("n1", { gpu: "a100", cores: "16" });
  const plain = node("n2", { cores: "4" });

  it.each([
    ["In", ["a100", "h100"], true, false],
    ["NotIn", ["a100"], false, true], // a node without the key is "not in"
    ["Exists", undefined, true, false],
    ["DoesNotExist", undefined, false, true],
  ] as const)("%s on key gpu", (op, values, onGpu, onPlain) => {
    const t = [expr("gpu", op, values ? [...values] : undefined)];
    expect(lazyMatch(t, gpu)).toEqual([onGpu, undefined]);
    expect(lazyMatch(t, plain)).toEqual([onPlain, undefined]);
  });

  it("compares Gt / Lt as integers, not strings", () => {
    // "16" > "8" is false as text, true as numbers.
    expect(lazyMatch([expr("cores", "Gt", ["8"])], gpu)[0]).toBe(true);
    expect(lazyMatch([expr("cores", "Gt", ["8"])], plain)[0]).toBe(false);
    expect(lazyMatch([expr("cores", "Lt", ["8"])], plain)[0]).toBe(true);
    // A missing label never satisfies Gt.
    expect(lazyMatch([expr("memory", "Gt", ["1"])], gpu)[0]).toBe(false);
  });

  it("ANDs the requirements of a term and ORs the terms", () => {
    const both: NodeSelectorTerm = {
      matchExpressions: [
        { key: "gpu", operator: "Exists" },
        { key: "cores", operator: "Gt", values: ["20"] },
      ],
    };
    expect(lazyMatch([both], gpu)[0]).toBe(false);
    expect(lazyMatch([both, expr("cores", "In", ["4"])], plain)[0]).toBe(true);
  });

  it("drops empty terms: they match nothing", () => {
    expect(lazyMatch([{}], gpu)).toEqual([false, undefined]);
    expect(lazyMatch([], gpu)).toEqual([false, undefined]);
  });
});

describe("matchFields", () => {
  it("selects metadata.name with In / NotIn of one value", () => {
    const t: NodeSelectorTerm[] = [
      { matchFields: [{ key: "metadata.name", operator: "In", values: ["n1"] }] },
    ];
    expect(lazyMatch(t, node("n1"))[0]).toBe(true);
    expect(lazyMatch(t, node("n2"))[0]).toBe(false);
    const not: NodeSelectorTerm[] = [
      { matchFields: [{ key: "metadata.name", operator: "NotIn", values: ["n1"] }] },
    ];
    expect(lazyMatch(not, node("n2"))[0]).toBe(true);
  });

  it("a field term with two values is a parse error, reported because nothing matched", () => {
    const bad: NodeSelectorTerm = {
      matchFields: [{ key: "metadata.name", operator: "In", values: ["n1", "n2"] }],
    };
    const [m, err] = lazyMatch([bad], node("n1"));
    expect(m).toBe(false);
    expect(err?.message).toBe(
      'nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{"n1", "n2"}: must have one element',
    );
  });
});

describe("parse errors", () => {
  const bad: NodeSelectorTerm = { matchExpressions: [{ key: "k", operator: "Gt", values: ["x"] }] };

  it("lazy: a good term that matches hides the bad one", () => {
    expect(lazyMatch([bad, expr("a", "Exists")], node("n", { a: "1" }))).toEqual([true, undefined]);
    const [m, err] = lazyMatch([bad, expr("a", "Exists")], node("n"));
    expect(m).toBe(false);
    expect(err?.message).toContain("for 'Gt', 'Lt' operators, the value must be an integer");
  });

  it("strict: NodeSelector.parse refuses the selector", () => {
    const r = NodeSelector.parse({ nodeSelectorTerms: [bad, expr("a", "Exists")] });
    expect(r.ok).toBe(false);
    const good = NodeSelector.parse({ nodeSelectorTerms: [expr("a", "Exists")] });
    expect(good.ok && good.value.match(node("n", { a: "" }))).toBe(true);
  });

  it("an unknown operator is not supported", () => {
    const r = NodeSelector.parse({
      nodeSelectorTerms: [{ matchExpressions: [{ key: "a", operator: "Near" as "In" }] }],
    });
    expect(!r.ok && r.error.message).toBe(
      'nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
    );
  });
});

describe("PreferredSchedulingTerms", () => {
  it("sums the weights of matching terms; weight 0 and empty preferences count nothing", () => {
    const r = PreferredSchedulingTerms.parse([
      { weight: 5, preference: expr("zone", "In", ["a"]) },
      { weight: 3, preference: expr("ssd", "Exists") },
      { weight: 0, preference: expr("ssd", "Exists") },
      { weight: 7, preference: {} },
    ]);
    if (!r.ok) throw r.error;
    expect(r.value.score(node("n", { zone: "a", ssd: "" }))).toBe(8); // 5 + 3
    expect(r.value.score(node("n", { ssd: "" }))).toBe(3);
    expect(r.value.score(node("n"))).toBe(0);
  });
});

describe("getRequiredNodeAffinity", () => {
  const pod = (spec: Partial<Pod["spec"]>): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: { containers: [], ...spec },
  });

  it("requires nodeSelector AND node affinity", () => {
    const p = pod({
      nodeSelector: { disk: "ssd" },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [expr("zone", "In", ["a"])] },
        },
      },
    });
    const req = getRequiredNodeAffinity(p);
    expect(req.match(node("n", { disk: "ssd", zone: "a" }))[0]).toBe(true);
    expect(req.match(node("n", { disk: "ssd", zone: "b" }))[0]).toBe(false);
    expect(req.match(node("n", { disk: "hdd", zone: "a" }))[0]).toBe(false);
  });

  it("matches every node when the pod says nothing", () => {
    expect(getRequiredNodeAffinity(pod({})).match(node("n"))).toEqual([true, undefined]);
  });
});
