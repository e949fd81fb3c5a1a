import { readFileSync, realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { apiVersionOf, resources } from "../resources.ts";
import {
  type FieldMeta,
  lookupField,
  lookupKind,
  patchMetaByKind,
  type StructMeta,
  splitStrategy,
} from "./patch-meta.ts";

/** Every tagged field of the table, with the struct it belongs to. */
function taggedFields(): { struct: string; field: string; meta: FieldMeta }[] {
  const out: { struct: string; field: string; meta: FieldMeta }[] = [];
  const seen = new Set<StructMeta>();
  const walk = (t: StructMeta) => {
    if (seen.has(t)) return;
    seen.add(t);
    for (const [field, meta] of Object.entries(t.fields)) {
      if (meta.patchStrategy) out.push({ struct: t.name, field, meta });
      if (meta.type) walk(meta.type);
    }
  };
  for (const kinds of Object.values(patchMetaByKind)) for (const t of Object.values(kinds)) walk(t);
  return out;
}

describe("patch metadata table", () => {
  it("covers every patchable resource the API server serves", () => {
    const missing = resources
      .filter((r) => r.verbs.includes("patch"))
      .filter((r) => !lookupKind(apiVersionOf(r), r.kind))
      .map((r) => `${apiVersionOf(r)} ${r.kind}`);
    expect(missing).toEqual([]);
  });

  it("an unlisted field is untagged: no strategy, nothing below", () => {
    const pod = lookupKind("v1", "Pod");
    expect(lookupField(pod, "nonsense")).toEqual({});
    expect(lookupField(undefined, "containers")).toEqual({});
    expect(lookupField(lookupField(pod, "spec").type, "containers")).toMatchObject({
      patchStrategy: "merge",
      patchMergeKey: "name",
    });
  });

  it("splits combined strategies as extractRetainKeysPatchStrategy does", () => {
    expect(splitStrategy("merge,retainKeys")).toEqual({ retainKeys: true, strategy: "merge" });
    expect(splitStrategy("retainKeys")).toEqual({ retainKeys: true, strategy: "" });
    expect(splitStrategy("replace")).toEqual({ retainKeys: false, strategy: "replace" });
    expect(splitStrategy(undefined)).toEqual({ retainKeys: false, strategy: "" });
  });
});

describeWithTools(
  "patch metadata matches the struct tags compiled into kubectl v1.32",
  ["kubectl"],
  (tools) => {
    // The Go struct tags of every API type kubectl links are strings in its binary:
    // `json:"containers" patchStrategy:"merge" patchMergeKey:"name" protobuf:"…"`.
    const real = realpathSync(tools.kubectl!.path!);
    const pinned = real.replace(/kubectl(\.\d+\.\d+)?$/, "kubectl.1.32");
    let binary: string;
    try {
      binary = readFileSync(pinned).toString("latin1");
    } catch {
      binary = readFileSync(real).toString("latin1");
    }

    /** Every struct tag in the binary that names this JSON field. */
    function tagsFor(field: string): string[] {
      const tags: string[] = [];
      for (const needle of [`json:"${field}"`, `json:"${field},omitempty"`]) {
        for (let i = binary.indexOf(needle); i >= 0; i = binary.indexOf(needle, i + 1)) {
          const end = binary.slice(i, i + 300).search(/[^\x20-\x7e]/);
          tags.push(binary.slice(i, end < 0 ? i + 300 : i + end));
        }
      }
      return tags;
    }

    it.each(taggedFields().map((f) => [`${f.struct}.${f.field}`, f] as const))("%s", (_name, f) => {
      const tags = tagsFor(f.field);
      const want = (tag: string) =>
        tag.includes(`patchStrategy:"${f.meta.patchStrategy}"`) &&
        (f.meta.patchMergeKey
          ? tag.includes(`patchMergeKey:"${f.meta.patchMergeKey}"`)
          : !tag.includes("patchMergeKey"));
      expect(tags.filter(want), `tags for ${f.field}: ${tags.join(" | ")}`).not.toHaveLength(0);
    });
  },
);
