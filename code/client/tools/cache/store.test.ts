import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import { mulberry32 } from "../../../testing/random.ts";
import { newIndexer, newStore } from "./cache.ts";
import { DeletedFinalStateUnknown, deletionHandlingMetaNamespaceKeyFunc } from "./delta-fifo.ts";
import { metaNamespaceIndexFunc, NamespaceIndex } from "./index.ts";
import { ExplicitKey, KeyError, metaNamespaceKeyFunc, splitMetaNamespaceKey } from "./store.ts";
import { IndexNotFoundError } from "./thread-safe-store.ts";

const pod = (ns: string, name: string, node = "", labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: ns, name, labels },
  spec: { nodeName: node },
});
const byNode = (o: KubeObject) => {
  const n = (o.spec as { nodeName?: string }).nodeName;
  return n ? [n] : [];
};
const byLabelValues = (o: KubeObject) => Object.values(o.metadata.labels ?? {});

describe("key functions", () => {
  it("name namespaced objects ns/name and cluster-scoped ones by name, and split back", () => {
    expect(metaNamespaceKeyFunc(pod("default", "web"))).toBe("default/web");
    expect(metaNamespaceKeyFunc({ apiVersion: "v1", kind: "Node", metadata: { name: "n1" } })).toBe("n1");
    expect(metaNamespaceKeyFunc(new ExplicitKey("a/b"))).toBe("a/b");
    expect(splitMetaNamespaceKey("default/web")).toEqual({ namespace: "default", name: "web" });
    expect(splitMetaNamespaceKey("n1")).toEqual({ namespace: "", name: "n1" });
    expect(() => splitMetaNamespaceKey("a/b/c")).toThrow(KeyError);
    expect(() => metaNamespaceKeyFunc("no meta")).toThrow(KeyError);
  });

  it("name a tombstone by the key it carries", () => {
    expect(deletionHandlingMetaNamespaceKeyFunc(new DeletedFinalStateUnknown("ns/gone", undefined))).toBe(
      "ns/gone",
    );
    expect(deletionHandlingMetaNamespaceKeyFunc(pod("a", "b"))).toBe("a/b");
  });
});

describe("Store", () => {
  it("adds, updates, deletes and replaces by key", () => {
    const s = newStore(metaNamespaceKeyFunc);
    s.add(pod("a", "1"));
    s.add(pod("a", "2"));
    s.update({ ...pod("a", "1"), spec: { nodeName: "n" } });
    expect(s.listKeys().sort()).toEqual(["a/1", "a/2"]);
    expect(s.getByKey("a/1")!.spec).toEqual({ nodeName: "n" });
    s.delete(pod("a", "2"));
    expect(s.get(pod("a", "2"))).toBeUndefined();
    s.replace([pod("b", "x")], "7");
    expect(s.listKeys()).toEqual(["b/x"]);
  });
});

describe("Indexer", () => {
  it("answers byIndex, indexKeys, index and listIndexFuncValues", () => {
    const ix = newIndexer(metaNamespaceKeyFunc, { [NamespaceIndex]: metaNamespaceIndexFunc, node: byNode });
    ix.add(pod("a", "1", "n1"));
    ix.add(pod("a", "2", "n2"));
    ix.add(pod("b", "3", "n1"));
    ix.add(pod("b", "4"));
    expect(
      ix
        .byIndex(NamespaceIndex, "a")
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(["1", "2"]);
    expect(ix.indexKeys("node", "n1").sort()).toEqual(["a/1", "b/3"]);
    expect(ix.index("node", pod("z", "z", "n2")).map((o) => o.metadata.name)).toEqual(["2"]);
    expect(ix.listIndexFuncValues("node").sort()).toEqual(["n1", "n2"]);
    expect(() => ix.byIndex("nope", "x")).toThrow(IndexNotFoundError);
    expect(() => ix.byIndex("nope", "x")).toThrow("Index with name nope does not exist");
  });

  it("moves an object out of its old bucket when its value changes, and drops empty buckets", () => {
    const ix = newIndexer(metaNamespaceKeyFunc, { node: byNode });
    ix.add(pod("a", "1", "n1"));
    ix.update(pod("a", "1", "n2"));
    expect(ix.indexKeys("node", "n1")).toEqual([]);
    expect(ix.indexKeys("node", "n2")).toEqual(["a/1"]);
    expect(ix.listIndexFuncValues("node")).toEqual(["n2"]);
    ix.update(pod("a", "1"));
    expect(ix.listIndexFuncValues("node")).toEqual([]);
    ix.update(pod("a", "1", "n3"));
    ix.delete(pod("a", "1", "n3"));
    expect(ix.listIndexFuncValues("node")).toEqual([]);
  });

  it("keeps multi-valued indices right under updates", () => {
    const ix = newIndexer(metaNamespaceKeyFunc, { values: byLabelValues });
    ix.add(pod("a", "1", "", { x: "red", y: "blue" }));
    ix.add(pod("a", "2", "", { x: "red" }));
    ix.update(pod("a", "1", "", { x: "green", y: "blue" }));
    expect(ix.indexKeys("values", "red")).toEqual(["a/2"]);
    expect(ix.indexKeys("values", "green")).toEqual(["a/1"]);
    expect(ix.listIndexFuncValues("values").sort()).toEqual(["blue", "green", "red"]);
  });

  it("rebuilds indices on replace, and indexes existing objects when an indexer is added", () => {
    const ix = newIndexer(metaNamespaceKeyFunc, { node: byNode });
    ix.add(pod("a", "1", "n1"));
    ix.replace([pod("a", "2", "n2")], "5");
    expect(ix.listIndexFuncValues("node")).toEqual(["n2"]);
    ix.addIndexers({ [NamespaceIndex]: metaNamespaceIndexFunc });
    expect(ix.indexKeys(NamespaceIndex, "a")).toEqual(["a/2"]);
    expect(() => ix.addIndexers({ node: byNode })).toThrow(/indexer conflict/);
  });

  it("matches a from-scratch index after a random sequence of writes (seeded)", () => {
    for (let seed = 1; seed <= 50; seed++) {
      const rnd = mulberry32(seed);
      const ix = newIndexer(metaNamespaceKeyFunc, { node: byNode, values: byLabelValues });
      for (let i = 0; i < 200; i++) {
        const name = String(Math.floor(rnd() * 10));
        const p = pod("ns", name, rnd() < 0.3 ? "" : `n${Math.floor(rnd() * 3)}`, {
          c: `c${Math.floor(rnd() * 3)}`,
        });
        const r = rnd();
        if (r < 0.6) ix.update(p);
        else if (r < 0.9) ix.delete(p);
        else
          ix.replace(
            ix.list().filter(() => rnd() < 0.7),
            "1",
          );
      }
      for (const name of ["node", "values"] as const) {
        const fresh = newIndexer(metaNamespaceKeyFunc, { [name]: name === "node" ? byNode : byLabelValues });
        for (const o of ix.list()) fresh.add(o);
        const vals = fresh.listIndexFuncValues(name).sort();
        expect(ix.listIndexFuncValues(name).sort(), `seed ${seed}`).toEqual(vals);
        for (const v of vals)
          expect(ix.indexKeys(name, v).sort(), `seed ${seed}`).toEqual(fresh.indexKeys(name, v).sort());
      }
    }
  });
});
