import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { unknownFields } from "../handlers/field-validation.ts";
import { decodeBody, type FieldValidation, protobufMediaType } from "../negotiation.ts";
import { openAPIDocument } from "../openapi.ts";
import { decodeProtobuf } from "../protobuf/decode.ts";
import { messageFor } from "../protobuf/registry.ts";
import { apiVersionOf, resources } from "../resources.ts";
import { encodeProtobuf, populate } from "../testing/schema-values.ts";

type Schema = Parameters<typeof populate>[0];

/** Every property of a schema, as dotted paths (to report which fields a round trip lost). */
function paths(v: unknown, prefix = ""): string[] {
  if (Array.isArray(v)) return v.flatMap((x) => paths(x, `${prefix}[]`));
  if (v && typeof v === "object")
    return Object.entries(v).flatMap(([k, x]) => [`${prefix}.${k}`, ...paths(x, `${prefix}.${k}`)]);
  return [];
}

describe("every field of every served kind round-trips through JSON, YAML and protobuf", () => {
  it("every served kind has a .proto message: none is decoded untyped or skipped here", () => {
    const untyped = resources.filter((r) => !messageFor(apiVersionOf(r), r.kind)).map((r) => r.kind);
    expect(untyped).toEqual([]);
  });

  for (const r of resources) {
    const apiVersion = apiVersionOf(r);
    it(`${apiVersion} ${r.kind}`, () => {
      const schemas = (
        openAPIDocument(r.group, r.version) as { components: { schemas: Record<string, Schema> } }
      ).components.schemas;
      const name = Object.keys(schemas).find((n) =>
        (
          (schemas[n] as { "x-kubernetes-group-version-kind"?: { kind: string }[] })[
            "x-kubernetes-group-version-kind"
          ] ?? []
        ).some((g) => g.kind === r.kind),
      );
      expect(name, `the OpenAPI schema of ${r.kind}`).toBeDefined();
      const object = { apiVersion, kind: r.kind, ...(populate(schemas[name as string], schemas) as object) };
      const expected = { apiVersion, kind: r.kind };
      const fieldCount = paths(object).length;
      expect(fieldCount).toBeGreaterThan(5);

      const bodies: [string, string, Buffer][] = [
        ["JSON", "application/json", Buffer.from(JSON.stringify(object))],
        ["YAML", "application/yaml", Buffer.from(stringify(object))],
        ["protobuf", protobufMediaType, encodeProtobuf(apiVersion, r.kind, object)],
      ];
      for (const [format, contentType, body] of bodies) {
        const fieldValidation: FieldValidation = { directive: "Strict", warnings: [] };
        const got = decodeBody(contentType, body, expected, decodeProtobuf, fieldValidation);
        const kept = new Set(paths(got));
        const lost = paths(object).filter((p) => !kept.has(p));
        expect(lost, `${format}: fields lost`).toEqual([]);
        expect(got, format).toEqual(object);
        expect(fieldValidation.warnings).toEqual([]);
        // The create handler skips the schema walk after a typed decode (namesChecked): the
        // walk must have nothing left to find, or skipping it would change what is stored.
        expect(fieldValidation.namesChecked ?? false, format).toBe(format !== "protobuf");
        expect(unknownFields(got), format).toEqual([]);
      }
      // Unknown names anywhere: the typed decode drops and reports them itself.
      const withUnknown = {
        ...object,
        bogusTop: 1,
        metadata: { ...(object as unknown as { metadata: object }).metadata, bogusMeta: 1 },
      };
      const fv: FieldValidation = { directive: "Warn", warnings: [] };
      const got = decodeBody(
        "application/json",
        Buffer.from(JSON.stringify(withUnknown)),
        expected,
        decodeProtobuf,
        fv,
      );
      expect(fv.namesChecked).toBe(true);
      expect([...fv.warnings].sort()).toEqual([
        'unknown field "bogusTop"',
        'unknown field "metadata.bogusMeta"',
      ]);
      expect(unknownFields(got)).toEqual([]);
    });
  }
});
