import { describe, expect, it } from "vitest";
import { addQuantity, canonicalQuantity, cmpQuantity, formatQuantity, parseQuantity } from "./quantity.ts";

const q = (s: string) => {
  const v = parseQuantity(s);
  if (!v) throw new Error(`not a quantity: ${s}`);
  return v;
};

describe("quantities", () => {
  it("add exactly and print canonically, keeping the first operand's format", () => {
    expect(formatQuantity(addQuantity(q("500m"), q("1500m")))).toBe("2");
    expect(formatQuantity(addQuantity(q("100m"), q("200m")))).toBe("300m");
    expect(formatQuantity(addQuantity(q("1Gi"), q("512Mi")))).toBe("1536Mi");
    expect(formatQuantity(addQuantity(q("0.1"), q("0.2")))).toBe("300m");
    expect(canonicalQuantity("2000")).toBe("2k");
    expect(canonicalQuantity("1024Mi")).toBe("1Gi");
    expect(canonicalQuantity("512Ki")).toBe("512Ki");
    expect(canonicalQuantity("1e3")).toBe("1k");
  });

  it("compare by value and refuse what is not a quantity", () => {
    expect(cmpQuantity(q("1Gi"), q("1024Mi"))).toBe(0);
    expect(cmpQuantity(q("999m"), q("1"))).toBe(-1);
    expect(parseQuantity("1.2.3")).toBeUndefined();
    expect(parseQuantity("abc")).toBeUndefined();
    expect(parseQuantity("")).toBeUndefined();
  });
});
