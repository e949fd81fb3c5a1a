import { describe, expect, it, vi } from "vitest";
import { isStatusError } from "../errors.ts";
import { resources } from "../resources.ts";

vi.mock("./strategies/validation.ts", () => ({
  validateCreate: () => [],
  validateUpdate: () => [],
  validateStatusUpdate: () => [],
  validateNamespaceFinalizeUpdate: () => [],
}));

// Resources kept in storage go through the generic store and its strategies; the others
// (SelfSubjectAccessReview: computed, never stored) have their own REST handler.
const stored = resources.filter((r) => r.stored !== false);

const { strategyFor } = await import("./rest-storage.ts");
const { convertFieldLabel } = await import("./strategy.ts");
const { fieldLabelNotSupportedMessage } = await import("../storage/selection-predicate.ts");
const { semanticDeepEqual } = await import("./strategies/helpers.ts");

describe("strategyFor", () => {
  it("has a strategy for every served resource, with the resource's scope and status subresource", () => {
    for (const r of stored) {
      const s = strategyFor(r.group, r.resource);
      expect(s.namespaceScoped, r.resource).toBe(r.namespaced);
      const hasStatus = r.subresources.some((sub) => sub.name === "status");
      expect(s.status !== undefined, `${r.resource} status`).toBe(hasStatus);
      if (s.status) expect(s.status.namespaceScoped).toBe(r.namespaced);
    }
  });

  it("selectable fields always hold the name, and the namespace for namespaced resources", () => {
    for (const r of stored) {
      const s = strategyFor(r.group, r.resource);
      const fields = s.selectableFields({ metadata: { name: "n", namespace: "ns" } });
      expect(fields["metadata.name"]).toBe("n");
      expect("metadata.namespace" in fields, r.resource).toBe(r.namespaced);
      // Every field label other than a namespace/podIPs spelling is a field the object offers.
      for (const label of s.fieldLabels) {
        if (label === "metadata.namespace" || label === "status.podIPs") continue;
        expect(Object.keys(fields), `${r.resource} ${label}`).toContain(label);
      }
    }
  });

  it("covers the stored resources", () => {
    expect(stored.map((r) => r.resource)).toContain("pods");
    expect(stored.length).toBeGreaterThanOrEqual(13);
  });

  it("refuses an unknown resource with a Status error", () => {
    let caught: unknown;
    try {
      strategyFor("apps", "widgets");
    } catch (e) {
      caught = e;
    }
    expect(isStatusError(caught)).toBe(true);
  });
});

describe("field labels", () => {
  it("accepts the resource's labels, maps old spellings, refuses the rest", () => {
    const pods = strategyFor("", "pods");
    expect(convertFieldLabel(pods, "spec.nodeName")).toBe("spec.nodeName");
    expect(convertFieldLabel(pods, "spec.host")).toBe("spec.nodeName");
    expect(convertFieldLabel(pods, "spec.containers")).toBeUndefined();
    expect(convertFieldLabel(strategyFor("", "configmaps"), "metadata.namespace")).toBe("metadata.namespace");
    expect(convertFieldLabel(strategyFor("", "nodes"), "metadata.namespace")).toBeUndefined();
    expect(fieldLabelNotSupportedMessage("spec.containers")).toBe(
      "field label not supported: spec.containers",
    );
  });
});

describe("semanticDeepEqual", () => {
  it("treats absent and empty as equal, and compares structure", () => {
    expect(semanticDeepEqual({ a: [] }, {})).toBe(true);
    expect(semanticDeepEqual({ a: { b: "" } }, { a: null })).toBe(true);
    expect(semanticDeepEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(semanticDeepEqual({ a: 0 }, { a: 1 })).toBe(false);
    expect(semanticDeepEqual({ a: { b: "x" } }, { a: { b: "x", c: false } })).toBe(true);
    expect(semanticDeepEqual("1", 1)).toBe(false);
  });
});

describe("newRESTStorage", () => {
  it("puts a watch cache in front of every stored resource but events, as upstream's DefaultWatchCacheSizes", async () => {
    const { newRESTStorage } = await import("./rest-storage.ts");
    const cached = new Map<string, boolean | undefined>();
    const backend = {
      forResource: (prefix: string, opts?: { cache?: boolean }) => {
        cached.set(prefix, opts?.cache);
        return {};
      },
    } as unknown as Parameters<typeof newRESTStorage>[0];
    newRESTStorage(backend, true);
    expect(cached.get("/registry/events")).toBe(false);
    expect(cached.get("/registry/pods")).toBe(true);
    expect(cached.get("/registry/minions")).toBe(true);
    expect([...cached.values()].filter((c) => c === false)).toHaveLength(1);
    newRESTStorage(backend, false);
    expect([...cached.values()].every((c) => c === false)).toBe(true);
  });
});
