import { describe, expect, it } from "vitest";
import {
  type Labels,
  newRequirement,
  nothing,
  type Operator,
  type Requirement,
  type Result,
  type Selector,
  selectorToString,
} from "../../../code/api/labels.ts";
import { matches, parse, selectorMatches } from "./selector.ts";

// Requirements for the matching tests are built with the course's own newRequirement, so these
// tests exercise only your matches() / selectorMatches().
function req(key: string, operator: Operator, values: string[] = []): Requirement {
  const built = newRequirement(key, operator, values);
  if (!built.ok) throw new Error(built.error.message);
  return built.value;
}

function parsed(selector: string): Selector {
  const result = parse(selector);
  if (!result.ok) throw new Error(`parse(${JSON.stringify(selector)}) failed: ${result.error.message}`);
  return result.value;
}

function errorOf(result: Result<Selector>): string {
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.value)}`);
  return result.error.message;
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

describe("parsing", () => {
  describe("parse: valid selectors", () => {
    it("reads every operator", () => {
      expect(parsed("x=a").requirements).toEqual([{ key: "x", operator: "=", values: ["a"] }]);
      expect(parsed("x==a").requirements).toEqual([{ key: "x", operator: "==", values: ["a"] }]);
      expect(parsed("x!=a").requirements).toEqual([{ key: "x", operator: "!=", values: ["a"] }]);
      expect(parsed("x in (a,b)").requirements).toEqual([{ key: "x", operator: "in", values: ["a", "b"] }]);
      expect(parsed("x notin (a)").requirements).toEqual([{ key: "x", operator: "notin", values: ["a"] }]);
      expect(parsed("x").requirements).toEqual([{ key: "x", operator: "exists", values: [] }]);
      expect(parsed("!x").requirements).toEqual([{ key: "x", operator: "!", values: [] }]);
      expect(parsed("x>1").requirements).toEqual([{ key: "x", operator: "gt", values: ["1"] }]);
      expect(parsed("x<1").requirements).toEqual([{ key: "x", operator: "lt", values: ["1"] }]);
    });

    it("reads the empty string as a selector without requirements", () => {
      expect(parsed("").requirements).toEqual([]);
      expect(parsed("   ").requirements).toEqual([]);
    });

    it("ignores whitespace around tokens", () => {
      expect(parsed(" x = a , y in ( b , c ) , ! z ")).toEqual(parsed("x=a,y in (b,c),!z"));
      expect(parsed("x\tin\n(a)")).toEqual(parsed("x in (a)"));
      expect(parsed("x in(a)")).toEqual(parsed("x in (a)"));
    });

    it("reads a missing value as the empty string", () => {
      expect(parsed("x=").requirements).toEqual([{ key: "x", operator: "=", values: [""] }]);
      expect(parsed("x=,y").requirements).toEqual([
        { key: "x", operator: "=", values: [""] },
        { key: "y", operator: "exists", values: [] },
      ]);
      expect(parsed("x in (a,)").requirements).toEqual([{ key: "x", operator: "in", values: ["", "a"] }]);
      expect(parsed("x in (,a)").requirements).toEqual([{ key: "x", operator: "in", values: ["", "a"] }]);
    });

    it("reads () as the set holding only the empty string, not as an empty set", () => {
      expect(parsed("x in ()").requirements).toEqual([{ key: "x", operator: "in", values: [""] }]);
      expect(parsed("x notin ()").requirements).toEqual([{ key: "x", operator: "notin", values: [""] }]);
    });

    it("treats in and notin as ordinary words where no operator can stand", () => {
      expect(parsed("notin=in").requirements).toEqual([{ key: "notin", operator: "=", values: ["in"] }]);
      expect(parsed("in in (in,notin)").requirements).toEqual([
        { key: "in", operator: "in", values: ["in", "notin"] },
      ]);
    });

    it("sorts requirements by key, and set values, dropping duplicates", () => {
      expect(parsed("x=a,a=x,m").requirements.map((r) => r.key)).toEqual(["a", "m", "x"]);
      expect(parsed("x in (c,a,b,a)").requirements).toEqual([
        { key: "x", operator: "in", values: ["a", "b", "c"] },
      ]);
    });

    it("reads prefixed keys", () => {
      expect(parsed("app.kubernetes.io/name=web").requirements).toEqual([
        { key: "app.kubernetes.io/name", operator: "=", values: ["web"] },
      ]);
    });

    it("gives back a selector that prints in the canonical form", () => {
      expect(selectorToString(parsed("z, b!=2 ,!a,c in (3,1)"))).toBe("!a,b!=2,c in (1,3),z");
      expect(selectorToString(parsed("x= ,y>5"))).toBe("x=,y>5");
    });
  });

  describe("parse: bad selectors", () => {
    it.each([
      ["x=a,", "found '', expected: identifier after ','"],
      [",x", "found ',', expected: !, identifier, or 'end of string'"],
      ["x==a==b", "found '==', expected: ',' or 'end of string'"],
      ["x in (a", "unable to parse requirement: found '', expected: ',' or ')'"],
      ["x in a", "unable to parse requirement: found 'a' expected: '('"],
      ["x y", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"],
    ])("rejects %j with upstream's message", (input, message) => {
      expect(errorOf(parse(input))).toBe(message);
    });

    it("rejects !key followed by an operator: !x=a is not x!=a", () => {
      expect(errorOf(parse("!x=a"))).toBe("found '=', expected: ',' or 'end of string'");
    });

    it.each(["!", "!!x", "x=a b", "x in (a b)", "x in (=)", "x,,y", "(x)", "x=(", "x>=1"])(
      "rejects %j",
      (input) => {
        expect(parse(input).ok).toBe(false);
      },
    );

    it("rejects invalid keys and values", () => {
      expect(errorOf(parse("x/y/z=a"))).toContain('Invalid value: "x/y/z"');
      expect(errorOf(parse("-x"))).toContain('Invalid value: "-x"');
      expect(errorOf(parse(`${"k".repeat(64)}=a`))).toContain("must be no more than 63 characters");
      expect(errorOf(parse("x=-a"))).toContain('Invalid value: "-a"');
      expect(errorOf(parse("x in (a,b.)"))).toContain('Invalid value: "b."');
    });

    it("rejects gt and lt values that are not integers", () => {
      expect(errorOf(parse("x<a"))).toContain("for 'Gt', 'Lt' operators, the value must be an integer");
      expect(errorOf(parse("x>1.5"))).toContain("for 'Gt', 'Lt' operators, the value must be an integer");
    });
  });
});
