import { describe, expect, it } from "vitest";
import { openAPIDocument } from "./openapi.ts";
import { lookupField, lookupKind, type StructMeta } from "./patch/patch-meta.ts";
import { apiVersionOf, resources } from "./resources.ts";

// biome-ignore lint/suspicious/noExplicitAny: the test walks free-form OpenAPI JSON
type Obj = Record<string, any>;

/** The schema a property points at (`$ref`, or `allOf: [$ref]`, or a list's items). */
function target(prop: Obj, schemas: Obj): Obj | undefined {
  const ref = prop.$ref ?? prop.allOf?.[0]?.$ref ?? prop.items?.$ref ?? prop.items?.allOf?.[0]?.$ref;
  return ref ? schemas[ref.slice(ref.lastIndexOf("/") + 1)] : undefined;
}

/**
 * Every field where the published schema and patch-meta.ts (what the server's own strategic merge
 * patch uses) disagree on the patch strategy or merge key: kubectl apply computes its patches from
 * the schema, the server applies them with the table, so the two must say the same.
 */
function disagreements(): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const walk = (schema: Obj | undefined, meta: StructMeta | undefined, path: string, schemas: Obj) => {
    if (!schema?.properties || seen.has(path) || path.split(".").length > 8) return;
    seen.add(path);
    for (const [name, prop] of Object.entries(schema.properties as Obj)) {
      const field = lookupField(meta, name);
      const published = `${prop["x-kubernetes-patch-strategy"] ?? ""}|${prop["x-kubernetes-patch-merge-key"] ?? ""}`;
      const table = `${field.patchStrategy ?? ""}|${field.patchMergeKey ?? ""}`;
      if (published !== table) out.push(`${path}.${name}: OpenAPI ${published}, patch-meta ${table}`);
      walk(target(prop, schemas), field.type, `${path}.${name}`, schemas);
    }
  };
  for (const r of resources.filter((x) => x.verbs.includes("patch"))) {
    const doc = openAPIDocument(r.group, r.version) as Obj;
    const schemas = doc.components.schemas as Obj;
    const kind = Object.values(schemas).find((s: Obj) =>
      s["x-kubernetes-group-version-kind"]?.some((g: Obj) => g.kind === r.kind && g.group === r.group),
    );
    walk(kind, lookupKind(apiVersionOf(r), r.kind), r.kind, schemas);
  }
  return out;
}

describe("OpenAPI patch extensions", () => {
  it("publish the unions kubectl apply must send $retainKeys for (volumes, a Deployment's strategy)", () => {
    const core = (openAPIDocument("", "v1") as Obj).components.schemas;
    expect(core["io.k8s.api.core.v1.PodSpec"].properties.volumes).toMatchObject({
      "x-kubernetes-patch-strategy": "merge,retainKeys",
      "x-kubernetes-patch-merge-key": "name",
    });
    const apps = (openAPIDocument("apps", "v1") as Obj).components.schemas;
    expect(apps["io.k8s.api.apps.v1.DeploymentSpec"].properties.strategy).toMatchObject({
      "x-kubernetes-patch-strategy": "retainKeys",
    });
  });

  it("agree with the table the server's strategic merge patch uses, field by field", () => {
    expect(disagreements()).toEqual([]);
  });
});
