import { describe, expect, it } from "vitest";
import { StatusError } from "../errors.ts";
import {
  applyJSONPatch,
  applyOperations,
  decodePatchKey,
  JSONPatchError,
  maxJSONPatchOperations,
} from "./json-patch.ts";

const doc = () => ({
  metadata: { name: "web", labels: { app: "web" } },
  spec: { containers: [{ name: "a", image: "nginx", args: ["x", "y"] }] },
});

function statusOf(f: () => unknown): StatusError {
  try {
    f();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error("expected a StatusError");
}

describe("applyJSONPatch", () => {
  it("applies operations in order without touching the input", () => {
    const d = doc();
    const out = applyJSONPatch(d, [
      { op: "add", path: "/metadata/labels/tier", value: "front" },
      { op: "replace", path: "/spec/containers/0/image", value: "nginx:2" },
      { op: "remove", path: "/spec/containers/0/args/0" },
      { op: "copy", from: "/metadata/name", path: "/metadata/labels/name" },
      { op: "move", from: "/metadata/labels/app", path: "/metadata/labels/was-app" },
      { op: "test", path: "/spec/containers/0/args", value: ["y"] },
    ]);
    expect(out).toEqual({
      metadata: { name: "web", labels: { tier: "front", name: "web", "was-app": "web" } },
      spec: { containers: [{ name: "a", image: "nginx:2", args: ["y"] }] },
    });
    expect(d).toEqual(doc());
  });

  it("appends with - and inserts at an index", () => {
    const out = applyOperations(doc(), [
      { op: "add", path: "/spec/containers/0/args/-", value: "z" },
      { op: "add", path: "/spec/containers/0/args/0", value: "first" },
    ]) as ReturnType<typeof doc>;
    expect(out.spec.containers[0]!.args).toEqual(["first", "x", "y", "z"]);
  });

  it("unescapes ~1 and ~0 in pointer segments (~01 is ~1, not /)", () => {
    expect(decodePatchKey("a~1b~0c")).toBe("a/b~c");
    expect(decodePatchKey("~01")).toBe("~1");
    const out = applyOperations(doc(), [
      { op: "add", path: "/metadata/labels/example.com~1role", value: "x" },
    ]) as {
      metadata: { labels: Record<string, string> };
    };
    expect(out.metadata.labels["example.com/role"]).toBe("x");
  });

  it("keeps the library's quirks: replace adds a missing key, negative indices count from the end", () => {
    const out = applyOperations(doc(), [
      { op: "replace", path: "/spec/nodeName", value: "n1" },
      { op: "remove", path: "/spec/containers/0/args/-1" },
    ]) as { spec: { nodeName: string; containers: { args: string[] }[] } };
    expect(out.spec.nodeName).toBe("n1");
    expect(out.spec.containers[0]!.args).toEqual(["x"]);
  });

  it("a failing operation is 422 Invalid with upstream's fixed message and the library error as cause", () => {
    const e = statusOf(() => applyJSONPatch(doc(), [{ op: "remove", path: "/spec/missing" }]));
    expect(e.status).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "the server rejected our request due to an error in our request",
      reason: "Invalid",
      details: {},
      code: 422,
    });
    expect((e.cause as Error).message).toBe(
      "error in remove for path: '/spec/missing': Unable to remove nonexistent key: missing: missing value",
    );
  });

  it("a failing test fails the whole patch and nothing is applied", () => {
    const d = doc();
    const e = statusOf(() =>
      applyJSONPatch(d, [
        { op: "replace", path: "/metadata/name", value: "other" },
        { op: "test", path: "/metadata/labels/app", value: "db" },
      ]),
    );
    expect(e.code).toBe(422);
    expect((e.cause as JSONPatchError).message).toBe(
      "testing value /metadata/labels/app failed: test failed",
    );
    expect(d.metadata.name).toBe("web");
  });

  it.each([
    [
      { op: "add", path: "/spec/a/b", value: 1 },
      `add operation does not apply: doc is missing path: "/spec/a/b": missing value`,
    ],
    [
      { op: "add", path: "/spec/containers/0/args/5", value: 1 },
      "error in add for path: '/spec/containers/0/args/5': Unable to access invalid index: 5: invalid index referenced",
    ],
    [
      { op: "replace", path: "/spec/containers/3", value: 1 },
      "replace operation does not apply: doc is missing key: /spec/containers/3: missing value",
    ],
    [
      { op: "copy", path: "/a" },
      "copy operation failed to decode from: operation, missing from field: missing value",
    ],
    [{ op: "bogus", path: "/a" }, "Unexpected kind: bogus"],
    [{ path: "/a" }, "Unexpected kind: unknown"],
  ])("library message for %j", (op, message) => {
    expect(() => applyOperations(doc(), [op])).toThrow(new JSONPatchError(message));
  });

  it("a body that is not a list of objects is 400 with Go's decoding message", () => {
    const e = statusOf(() => applyJSONPatch(doc(), { op: "add" }));
    expect(e.code).toBe(400);
    expect(e.reason).toBe("BadRequest");
    expect(e.message).toBe("json: cannot unmarshal object into Go value of type jsonpatch.Patch");
    expect(statusOf(() => applyJSONPatch(doc(), ["add"])).message).toBe(
      "json: cannot unmarshal string into Go value of type jsonpatch.Operation",
    );
  });

  it("null is an empty patch", () => {
    expect(applyJSONPatch(doc(), null)).toEqual(doc());
  });

  it("more than 10000 operations is 413", () => {
    const ops = Array.from({ length: maxJSONPatchOperations + 1 }, () => ({ op: "test", path: "/metadata" }));
    const e = statusOf(() => applyJSONPatch(doc(), ops));
    expect(e.code).toBe(413);
    expect(e.reason).toBe("RequestEntityTooLarge");
    expect(e.message).toBe(
      "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001",
    );
  });
});
