import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../code/api/meta.ts";
import { newIndexer } from "../../../code/client/tools/cache/cache.ts";
import { metaNamespaceIndexFunc } from "../../../code/client/tools/cache/index.ts";
import { metaNamespaceKeyFunc } from "../../../code/client/tools/cache/store.ts";
import { mulberry32 } from "../../../code/testing/random.ts";
import { MiniIndexer } from "./mini-indexer.ts";

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
const byLabelValue = (o: KubeObject) => Object.values(o.metadata.labels ?? {});
const indexers = { namespace: metaNamespaceIndexFunc, node: byNode, labels: byLabelValue };
const sorted = (xs: string[]) => [...xs].sort();

describe("MiniIndexer", () => {
  it("files objects by namespace and by node, and answers byIndex and indexKeys", () => {
    const ix = new MiniIndexer(indexers);
    ix.upsert("a/1", pod("a", "1", "n1"));
    ix.upsert("a/2", pod("a", "2", "n2"));
    ix.upsert("b/3", pod("b", "3", "n1"));
    expect(sorted(ix.indexKeys("namespace", "a"))).toEqual(["a/1", "a/2"]);
    expect(sorted(ix.byIndex("node", "n1").map((o) => o.metadata.name!))).toEqual(["1", "3"]);
    expect(sorted(ix.listIndexFuncValues("node"))).toEqual(["n1", "n2"]);
    expect(ix.get("b/3")?.metadata.name).toBe("3");
    expect(ix.byIndex("node", "n9")).toEqual([]);
  });

  it("moves an object out of its old bucket when its value changes", () => {
    const ix = new MiniIndexer(indexers);
    ix.upsert("a/1", pod("a", "1", "n1"));
    ix.upsert("a/1", pod("a", "1", "n2"));
    expect(ix.indexKeys("node", "n1")).toEqual([]);
    expect(ix.indexKeys("node", "n2")).toEqual(["a/1"]);
    ix.upsert("a/1", pod("a", "1", "", { app: "web", tier: "front" }));
    ix.upsert("a/1", pod("a", "1", "", { app: "db", tier: "front" }));
    expect(ix.indexKeys("labels", "web")).toEqual([]);
    expect(ix.indexKeys("labels", "db")).toEqual(["a/1"]);
    expect(ix.indexKeys("labels", "front")).toEqual(["a/1"]);
  });

  it("files an object under every value its index function returns, and none for []", () => {
    const ix = new MiniIndexer(indexers);
    ix.upsert("a/1", pod("a", "1", "", { x: "red", y: "blue" }));
    expect(sorted(ix.listIndexFuncValues("labels"))).toEqual(["blue", "red"]);
    expect(ix.listIndexFuncValues("node")).toEqual([]);
  });

  it("drops empty buckets, on delete and on update", () => {
    const ix = new MiniIndexer(indexers);
    ix.upsert("a/1", pod("a", "1", "n1"));
    ix.upsert("a/1", pod("a", "1", "n2"));
    expect(ix.listIndexFuncValues("node")).toEqual(["n2"]);
    ix.delete("a/1");
    expect(ix.listIndexFuncValues("node")).toEqual([]);
    expect(ix.listIndexFuncValues("namespace")).toEqual([]);
    expect(ix.get("a/1")).toBeUndefined();
    ix.delete("a/404");
  });

  it("throws for an index that was never registered", () => {
    const ix = new MiniIndexer(indexers);
    expect(() => ix.byIndex("owner", "x")).toThrow(/does not exist/);
    expect(() => ix.indexKeys("owner", "x")).toThrow(/does not exist/);
    expect(() => ix.listIndexFuncValues("owner")).toThrow(/does not exist/);
  });

  it("matches the course's indexer bucket for bucket over random writes (seeded)", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const rnd = mulberry32(seed);
      const mine = new MiniIndexer(indexers);
      const ref = newIndexer(metaNamespaceKeyFunc, indexers);
      for (let i = 0; i < 150; i++) {
        const p = pod(
          rnd() < 0.5 ? "a" : "b",
          String(Math.floor(rnd() * 8)),
          rnd() < 0.3 ? "" : `n${Math.floor(rnd() * 3)}`,
          rnd() < 0.5
            ? { app: `app${Math.floor(rnd() * 3)}` }
            : { app: "x", tier: `t${Math.floor(rnd() * 2)}` },
        );
        const key = metaNamespaceKeyFunc(p);
        if (rnd() < 0.7) {
          mine.upsert(key, p);
          ref.update(p);
        } else {
          mine.delete(key);
          ref.delete(p);
        }
      }
      for (const name of Object.keys(indexers)) {
        const values = sorted(ref.listIndexFuncValues(name));
        expect(sorted(mine.listIndexFuncValues(name)), `seed ${seed}, index ${name}`).toEqual(values);
        for (const v of values) {
          expect(sorted(mine.indexKeys(name, v)), `seed ${seed}, ${name}=${v}`).toEqual(
            sorted(ref.indexKeys(name, v)),
          );
        }
      }
    }
  });
});
