import { describe, expect, it } from "vitest";
import { parse } from "../../../api/label-selector-parser.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { newIndexer } from "./cache.ts";
import { metaNamespaceIndexFunc, NamespaceIndex } from "./index.ts";
import { Lister } from "./listers.ts";
import { metaNamespaceKeyFunc } from "./store.ts";

const o = (ns: string, name: string, app: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: ns, name, labels: { app } },
});

function selector(s: string) {
  const r = parse(s);
  if (!r.ok) throw new Error(String(r.error));
  return r.value;
}

describe("Lister", () => {
  for (const withIndex of [true, false]) {
    it(`lists by selector and namespace, and gets by name (${withIndex ? "namespace index" : "scan"})`, () => {
      const ix = newIndexer(
        metaNamespaceKeyFunc,
        withIndex ? { [NamespaceIndex]: metaNamespaceIndexFunc } : {},
      );
      for (const p of [o("a", "1", "web"), o("a", "2", "db"), o("b", "3", "web")]) ix.add(p);
      const l = new Lister(ix);
      expect(l.list().length).toBe(3);
      expect(
        l
          .list(selector("app=web"))
          .map((p) => p.metadata.name)
          .sort(),
      ).toEqual(["1", "3"]);
      expect(
        l
          .byNamespace("a")
          .list(selector("app=web"))
          .map((p) => p.metadata.name),
      ).toEqual(["1"]);
      expect(l.byNamespace("a").list().length).toBe(2);
      expect(l.byNamespace("").list().length).toBe(3);
      expect(l.byNamespace("b").get("3")?.metadata.name).toBe("3");
      expect(l.byNamespace("b").get("1")).toBeUndefined();
      expect(l.get("a/2")?.metadata.name).toBe("2");
    });
  }
});
