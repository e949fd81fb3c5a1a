import { describe, expect, it } from "vitest";
import { StatusError } from "../errors.ts";
import { applyMergePatch } from "./merge-patch.ts";

const doc = () => ({
  metadata: { name: "web", labels: { app: "web", tier: "front" } },
  spec: { containers: [{ name: "a" }, { name: "b" }], nodeSelector: { disk: "ssd" } },
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

describe("applyMergePatch", () => {
  it("merges objects recursively and null deletes", () => {
    const d = doc();
    const out = applyMergePatch(d, {
      metadata: { labels: { tier: null, new: "1" } },
      spec: { nodeSelector: null },
    });
    expect(out).toEqual({
      metadata: { name: "web", labels: { app: "web", new: "1" } },
      spec: { containers: [{ name: "a" }, { name: "b" }] },
    });
    expect(d).toEqual(doc());
  });

  it("replaces lists whole — the reason strategic merge patch exists", () => {
    const out = applyMergePatch(doc(), { spec: { containers: [{ name: "b", image: "x" }] } }) as ReturnType<
      typeof doc
    >;
    expect(out.spec.containers).toEqual([{ name: "b", image: "x" }]);
  });

  it("prunes nulls from values that land where nothing was, also inside objects in lists", () => {
    const out = applyMergePatch(doc(), {
      spec: { securityContext: { runAsUser: 1, fsGroup: null }, extra: [{ a: null, b: 1 }, null] },
    }) as { spec: Record<string, unknown> };
    expect(out.spec.securityContext).toEqual({ runAsUser: 1 });
    expect(out.spec.extra).toEqual([{ b: 1 }, null]);
  });

  it("a list replacing an object keeps its nulls, as the library does", () => {
    const out = applyMergePatch(doc(), { metadata: { labels: [{ a: null }] } }) as {
      metadata: { labels: unknown };
    };
    expect(out.metadata.labels).toEqual([{ a: null }]);
  });

  it("a __proto__ key is data: it lands as a field and no prototype changes", () => {
    const patch = JSON.parse('{"metadata":{"__proto__":{"polluted":1}}}');
    const out = applyMergePatch(doc(), patch) as { metadata: Record<string, unknown> };
    expect(Object.hasOwn(out.metadata, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(out.metadata)).toBe(Object.prototype);
  });

  it("a null or scalar patch is 400 Invalid JSON Patch", () => {
    for (const p of [null, 3, "x", true]) {
      const e = statusOf(() => applyMergePatch(doc(), p));
      expect(e.code).toBe(400);
      expect(e.reason).toBe("BadRequest");
      expect(e.message).toBe("Invalid JSON Patch");
    }
  });

  it("a list patch cannot become an object: 422 Invalid on field patch", () => {
    const e = statusOf(() => applyMergePatch(doc(), [{ a: 1 }]));
    expect(e.code).toBe(422);
    expect(e.reason).toBe("Invalid");
    expect(e.status.details?.causes?.[0]?.field).toBe("patch");
  });
});
