import { describe, expect, it } from "vitest";
import {
  type Labels,
  newRequirement,
  nothing,
  type Operator,
  type Requirement,
  type Selector,
} from "../../../code/api/labels.ts";
import { matches, selectorMatches } from "./selector.ts";

// The required part: matching. Requirements are built with the course's own newRequirement, so
// these tests exercise only your matches() / selectorMatches(). The parser is the optional part
// (parser.optional.test.ts).
function req(key: string, operator: Operator, values: string[] = []): Requirement {
  const built = newRequirement(key, operator, values);
  if (!built.ok) throw new Error(built.error.message);
  return built.value;
}

describe("matching", () => {
  describe("matches: one requirement", () => {
    const cases: [string, Requirement, Labels, boolean][] = [
      ["x=a on x=a", req("x", "=", ["a"]), { x: "a" }, true],
      ["x=a on x=b", req("x", "=", ["a"]), { x: "b" }, false],
      ["x=a without x", req("x", "=", ["a"]), { y: "a" }, false],
      ["x==a on x=a", req("x", "==", ["a"]), { x: "a" }, true],
      ["x= (empty value) on x=''", req("x", "=", [""]), { x: "" }, true],
      ["x= (empty value) without x", req("x", "=", [""]), {}, false],
      ["x in (a,b) on x=b", req("x", "in", ["a", "b"]), { x: "b" }, true],
      ["x in (a,b) on x=c", req("x", "in", ["a", "b"]), { x: "c" }, false],
      ["x in (a,b) without x", req("x", "in", ["a", "b"]), {}, false],
      ["x in (a) on x=A (case matters)", req("x", "in", ["a"]), { x: "A" }, false],
      ["x exists on x=''", req("x", "exists"), { x: "" }, true],
      ["x exists without x", req("x", "exists"), { y: "x" }, false],
      ["!x without x", req("x", "!"), { y: "x" }, true],
      ["!x on x=''", req("x", "!"), { x: "" }, false],
      ["x!=a on x=b", req("x", "!=", ["a"]), { x: "b" }, true],
      ["x!=a on x=a", req("x", "!=", ["a"]), { x: "a" }, false],
      ["x notin (a,b) on x=c", req("x", "notin", ["a", "b"]), { x: "c" }, true],
      ["x notin (a,b) on x=a", req("x", "notin", ["a", "b"]), { x: "a" }, false],
    ];
    it.each(cases)("%s", (_name, requirement, labels, expected) => {
      expect(matches(requirement, labels)).toBe(expected);
    });

    it("matches != and notin on an object that does not have the key at all", () => {
      expect(matches(req("env", "!=", ["prod"]), { app: "web" })).toBe(true);
      expect(matches(req("env", "notin", ["prod", "staging"]), { app: "web" })).toBe(true);
      expect(matches(req("env", "notin", ["prod"]), {})).toBe(true);
    });

    it("compares gt and lt as integers, not as text", () => {
      expect(matches(req("x", "gt", ["9"]), { x: "10" })).toBe(true);
      expect(matches(req("x", "lt", ["10"]), { x: "9" })).toBe(true);
      expect(matches(req("x", "gt", ["100"]), { x: "20" })).toBe(false);
      expect(matches(req("x", "gt", ["9"]), { x: "9" })).toBe(false);
      expect(matches(req("x", "lt", ["9"]), { x: "9" })).toBe(false);
    });

    it("never matches gt or lt when the label is missing or not an integer", () => {
      expect(matches(req("x", "gt", ["1"]), {})).toBe(false);
      expect(matches(req("x", "lt", ["1"]), {})).toBe(false);
      expect(matches(req("x", "gt", ["1"]), { x: "abc" })).toBe(false);
      expect(matches(req("x", "lt", ["10"]), { x: "abc" })).toBe(false);
      expect(matches(req("x", "gt", ["1"]), { x: "2.5" })).toBe(false);
    });

    it("reads integers as upstream's strconv.ParseInt does: decimal digits only, 64 bits exact", () => {
      expect(matches(req("x", "gt", ["4"]), { x: "05" })).toBe(true);
      // Valid label values, but not integers to ParseInt, though JavaScript's Number() reads them.
      expect(matches(req("x", "lt", ["1"]), { x: "" })).toBe(false);
      expect(matches(req("x", "gt", ["5"]), { x: "1e3" })).toBe(false);
      expect(matches(req("x", "gt", ["5"]), { x: "0x10" })).toBe(false);
      // Beyond 2^53 a double cannot tell these apart; an int64 can.
      expect(matches(req("x", "gt", ["9007199254740992"]), { x: "9007199254740993" })).toBe(true);
    });
  });

  describe("selectorMatches: all requirements", () => {
    const labels = { app: "shop", tier: "web" };
    const selector = (...requirements: Requirement[]): Selector => ({ requirements });

    it("requires every requirement to hold (the commas are ANDs)", () => {
      expect(selectorMatches(selector(req("app", "=", ["shop"]), req("tier", "=", ["web"])), labels)).toBe(
        true,
      );
      expect(selectorMatches(selector(req("app", "=", ["shop"]), req("tier", "=", ["db"])), labels)).toBe(
        false,
      );
      expect(selectorMatches(selector(req("app", "=", ["blog"]), req("tier", "=", ["web"])), labels)).toBe(
        false,
      );
      expect(selectorMatches(selector(req("app", "exists"), req("canary", "exists")), labels)).toBe(false);
    });

    it("matches every object with an empty selector", () => {
      expect(selectorMatches(selector(), labels)).toBe(true);
      expect(selectorMatches(selector(), {})).toBe(true);
    });

    it("matches no object with nothing(), the selector of an absent LabelSelector", () => {
      expect(selectorMatches(nothing(), labels)).toBe(false);
      expect(selectorMatches(nothing(), {})).toBe(false);
    });
  });
});
