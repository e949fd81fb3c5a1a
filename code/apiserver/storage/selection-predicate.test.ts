import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { isStatusError } from "../errors.ts";
import { defaultAttrs, newSelectionPredicate } from "./selection-predicate.ts";

const pod = (name: string, labels: Record<string, string>, nodeName?: string): KubeObject => ({
  metadata: { name, namespace: "default", labels },
  spec: nodeName ? { nodeName } : {},
});

const podAttrs = (o: KubeObject) => ({
  ...defaultAttrs(o),
  "spec.nodeName": ((o.spec as { nodeName?: string }).nodeName ?? "") as string,
});

function badRequest(f: () => unknown): { code: number; reason?: string; message?: string } {
  try {
    f();
  } catch (e) {
    if (isStatusError(e)) return e.status;
    throw e;
  }
  throw new Error("expected a StatusError");
}

describe("newSelectionPredicate", () => {
  it("ANDs the label and the field selector", () => {
    const p = newSelectionPredicate("app=web", "spec.nodeName=n1", podAttrs);
    expect(p.empty).toBe(false);
    expect(p.matches(pod("a", { app: "web" }, "n1"))).toBe(true);
    expect(p.matches(pod("b", { app: "web" }, "n2"))).toBe(false);
    expect(p.matches(pod("c", { app: "db" }, "n1"))).toBe(false);
    const unscheduled = newSelectionPredicate("", "spec.nodeName=", podAttrs);
    expect(unscheduled.matches(pod("d", {}))).toBe(true);
  });

  it("is empty, matching everything, when both selectors are empty", () => {
    const p = newSelectionPredicate("", "");
    expect(p.empty).toBe(true);
    expect(p.matches(pod("a", {}))).toBe(true);
  });

  it("answers 400 BadRequest with the parser's message for a bad selector", () => {
    expect(badRequest(() => newSelectionPredicate("a b", ""))).toMatchObject({
      code: 400,
      reason: "BadRequest",
      message: "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt",
    });
    expect(badRequest(() => newSelectionPredicate("", "metadata.name"))).toMatchObject({
      code: 400,
      message: "invalid selector: 'metadata.name'; can't understand 'metadata.name'",
    });
    expect(
      badRequest(() =>
        newSelectionPredicate("", "spec.foo=x", podAttrs, (label) =>
          ["metadata.name", "spec.nodeName"].includes(label) ? label : undefined,
        ),
      ),
    ).toMatchObject({ code: 400, message: "field label not supported: spec.foo" });
  });

  it("converts each field label before matching (an old spelling reads its new field)", () => {
    const p = newSelectionPredicate("", "spec.host=n1", podAttrs, (label) =>
      label === "spec.host" ? "spec.nodeName" : label,
    );
    expect(p.matches(pod("a", {}, "n1"))).toBe(true);
    expect(p.matches(pod("b", {}, "n2"))).toBe(false);
  });
});
