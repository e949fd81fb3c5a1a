import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { checkFieldValidation, unknownFields } from "./field-validation.ts";

const withTypos = (apiVersion: string, kind: string): KubeObject =>
  ({ apiVersion, kind, metadata: { name: "x", lables: { a: "b" } }, spek: {} }) as unknown as KubeObject;

describe("unknownFields", () => {
  it("walks a kind's OpenAPI schema at any depth (Pod)", () => {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web" },
      spec: { containers: [{ name: "app", image: "nginx", imagePulPolicy: "Always" }] },
    } as unknown as KubeObject;
    expect(unknownFields(pod).map((f) => f.path)).toEqual(["spec.containers[0].imagePulPolicy"]);
  });

  // Node, Event and Endpoints have no .proto, so openapi.ts publishes an open schema for them;
  // the top-level and metadata tables must still catch a misspelt field.
  it.each([
    ["v1", "Node"],
    ["v1", "Event"],
    ["v1", "Endpoints"],
    ["v1", "Binding"],
  ])("checks %s %s from the tables when its schema names no field", (apiVersion, kind) => {
    expect(
      unknownFields(withTypos(apiVersion, kind))
        .map((f) => f.path)
        .sort(),
    ).toEqual(["metadata.lables", "spek"]);
  });

  it("Strict refuses, Warn removes and warns, as the decoder drops what Go cannot hold", () => {
    expect(() => checkFieldValidation("Strict", withTypos("v1", "Node"))).toThrow(
      /^strict decoding error: unknown field "(spek|metadata\.lables)", unknown field "(spek|metadata\.lables)"$/,
    );
    const node = withTypos("v1", "Node");
    expect(checkFieldValidation(null, node).sort()).toEqual([
      'unknown field "metadata.lables"',
      'unknown field "spek"',
    ]);
    expect(node).toEqual({ apiVersion: "v1", kind: "Node", metadata: { name: "x" } });
  });
});
