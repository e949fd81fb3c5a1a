import { describe, expect, it } from "vitest";
import {
  escapeValue,
  type FieldSelector,
  matches,
  parse,
  type Result,
  requiresExactMatch,
  selectorToString,
  splitTerms,
  unescapeValue,
} from "./fields.ts";

function unwrap<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected success, got: ${r.error.message}`);
  return r.value;
}

function errorOf<T>(r: Result<T>): string {
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error.message;
}

const sel = (s: string): FieldSelector => unwrap(parse(s));

describe("parse", () => {
  it("reads =, == and != terms, sorted by their text", () => {
    expect(sel("spec.nodeName!=,metadata.name=web").requirements).toEqual([
      { field: "metadata.name", operator: "=", value: "web" },
      { field: "spec.nodeName", operator: "!=", value: "" },
    ]);
    expect(sel("a==b").requirements).toEqual([{ field: "a", operator: "==", value: "b" }]);
  });

  it("treats the empty string and empty terms as no requirement", () => {
    expect(sel("").requirements).toEqual([]);
    expect(sel("a=b,,c=d,").requirements.map((r) => r.field)).toEqual(["a", "c"]);
  });

  it("unescapes \\, \\= and \\\\ in values and keeps escaped commas inside one term", () => {
    expect(splitTerms("a=x\\,y,b=z")).toEqual(["a=x\\,y", "b=z"]);
    expect(sel("metadata.name=a\\,b\\=c\\\\d").requirements[0].value).toBe("a,b=c\\d");
  });

  it.each([
    ["metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
    ["a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"],
    ["metadata.name=a=b", "invalid field selector: unescaped character in value: 61"],
    ["metadata.name!==x", "invalid field selector: unescaped character in value: 61"],
    ["metadata.name=a\\x", "invalid field selector: invalid escape sequence: \\x"],
    ["metadata.name=a\\", "invalid field selector: invalid escape sequence: \\"],
  ])("refuses %j with upstream's message", (input, message) => {
    expect(errorOf(parse(input))).toBe(message);
  });
});

describe("matches", () => {
  const pod = { "metadata.name": "web", "metadata.namespace": "default", "spec.nodeName": "" };

  it("ANDs the terms; a missing field reads as the empty string", () => {
    expect(matches(sel("metadata.name=web,spec.nodeName="), pod)).toBe(true);
    expect(matches(sel("metadata.name=web,spec.nodeName!="), pod)).toBe(false);
    expect(matches(sel("status.phase!=Running"), pod)).toBe(true);
    expect(matches(sel("status.phase="), pod)).toBe(true);
    expect(matches(sel("metadata.name==db"), pod)).toBe(false);
    expect(matches(sel(""), pod)).toBe(true);
  });

  it("matches an escaped value against the raw field", () => {
    expect(matches(sel("metadata.name=a\\,b"), { "metadata.name": "a,b" })).toBe(true);
  });
});

describe("printing", () => {
  it("round-trips through escapeValue and the canonical string", () => {
    const value = "x,y=z\\";
    expect(unwrap(unescapeValue(escapeValue(value)))).toBe(value);
    const s = sel(`b!=1,a==${escapeValue(value)}`);
    expect(selectorToString(s)).toBe("a=x\\,y\\=z\\\\,b!=1");
    expect(sel(selectorToString(s))).toEqual({
      requirements: s.requirements.map((r) => ({ ...r, operator: r.operator === "==" ? "=" : r.operator })),
    });
  });

  it("finds the value an exact-match term demands", () => {
    expect(requiresExactMatch(sel("spec.nodeName=n1,metadata.name!=x"), "spec.nodeName")).toBe("n1");
    expect(requiresExactMatch(sel("spec.nodeName!=n1"), "spec.nodeName")).toBeUndefined();
  });
});
