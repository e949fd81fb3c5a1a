import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { convertToTable } from "./printers.ts";
import { asPartialObjectMetadata, setIncludeObject } from "./table.ts";

const now = new Date("2024-05-01T12:00:00Z");
const cm = (name: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", resourceVersion: "42", creationTimestamp: "2024-05-01T11:59:00Z" },
  data: { a: "1" },
});

describe("the Table", () => {
  it("rows carry PartialObjectMetadata by default, and the list metadata is copied", () => {
    const objs = [cm("a"), cm("b")];
    const t = convertToTable("", "configmaps", objs, now, {
      listMeta: { resourceVersion: "77", continue: "tok" },
    });
    expect(t.metadata).toEqual({ resourceVersion: "77", continue: "tok" });
    expect(t.rows.map((r) => r.cells)).toEqual([
      ["a", 1, "60s"],
      ["b", 1, "60s"],
    ]);
    expect(t.rows[0].object).toEqual({
      kind: "PartialObjectMetadata",
      apiVersion: "meta.k8s.io/v1",
      metadata: objs[0].metadata,
    });
  });

  it("includeObject switches what each row carries", () => {
    const objs = [cm("a")];
    const t = convertToTable("", "configmaps", objs, now);
    setIncludeObject(t, objs, "Object");
    expect(t.rows[0].object).toBe(objs[0]);
    setIncludeObject(t, objs, "None");
    expect("object" in t.rows[0]).toBe(false);
    setIncludeObject(t, objs, undefined);
    expect(t.rows[0].object).toEqual(asPartialObjectMetadata(objs[0]));
  });

  it("the metadata copy is independent of the object", () => {
    const obj = cm("a");
    const partial = asPartialObjectMetadata(obj, "meta.k8s.io/v1beta1");
    obj.metadata.name = "changed";
    expect(partial.metadata.name).toBe("a");
    expect(partial.apiVersion).toBe("meta.k8s.io/v1beta1");
  });

  it("noHeaders leaves the column definitions out", () => {
    expect(convertToTable("", "configmaps", [cm("a")], now, { noHeaders: true }).columnDefinitions).toEqual(
      [],
    );
  });
});
