import { describe, expect, it } from "vitest";
import { parse, tokenize } from "./label-selector-parser.ts";
import {
  everything,
  isEmptySelector,
  type Labels,
  labelSelectorAsSelector,
  matches,
  newRequirement,
  nothing,
  type Requirement,
  type Result,
  requirementToString,
  type Selector,
  selectorFromSet,
  selectorMatches,
  selectorToString,
  validateLabelKey,
} from "./labels.ts";
import { isQualifiedName, isValidLabelValue } from "./string-validation.ts";

// The error texts below are Kubernetes v1.32's, checked against `kubectl set selector --local`
// (kubectl v1.32.4), which runs the same parser.

const NAME_REGEX_ERROR =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_REGEX_ERROR =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end " +
  "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const SUBDOMAIN_REGEX_ERROR =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and " +
  "end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected success, got: ${result.error.message}`);
  return result.value;
}

function errorOf<T>(result: Result<T>): string {
  if (result.ok) throw new Error(`expected an error, got: ${JSON.stringify(result.value)}`);
  return result.error.message;
}

function req(key: string, operator: Requirement["operator"], values: string[] = []): Requirement {
  return unwrap(newRequirement(key, operator, values));
}

function parsed(selector: string): Selector {
  return unwrap(parse(selector));
}

describe("tokenize", () => {
  it.each([
    ["", "EndOfStringToken"],
    [",", "CommaToken"],
    ["notin", "NotInToken"],
    ["in", "InToken"],
    ["=", "EqualsToken"],
    ["==", "DoubleEqualsToken"],
    [">", "GreaterThanToken"],
    ["<", "LessThanToken"],
    ["!", "DoesNotExistToken"],
    ["!=", "NotEqualsToken"],
    ["(", "OpenParToken"],
    [")", "ClosedParToken"],
    ["~", "IdentifierToken"],
    ["||", "IdentifierToken"],
    ["IN", "IdentifierToken"],
  ])("reads %j as %s", (input, token) => {
    const [first] = tokenize(input);
    expect(first).toEqual({ tok: token, literal: token === "EndOfStringToken" ? "" : input });
  });

  it.each([
    [
      "key in ( value1, value2 )",
      ["IdentifierToken", "InToken", "OpenParToken", "IdentifierToken", "CommaToken"],
    ],
    ["!key", ["DoesNotExistToken", "IdentifierToken"]],
    [
      "x in (),y",
      ["IdentifierToken", "InToken", "OpenParToken", "ClosedParToken", "CommaToken", "IdentifierToken"],
    ],
    [
      "== != (), = notin",
      ["DoubleEqualsToken", "NotEqualsToken", "OpenParToken", "ClosedParToken", "CommaToken"],
    ],
    ["key>2", ["IdentifierToken", "GreaterThanToken", "IdentifierToken"]],
    ["!==", ["NotEqualsToken", "EqualsToken"]],
    [">=1", ["GreaterThanToken", "EqualsToken", "IdentifierToken"]],
  ])("cuts %j into the right tokens", (input, expected) => {
    const tokens = tokenize(input).map((item) => item.tok);
    expect(tokens.slice(0, expected.length)).toEqual(expected);
  });

  it("always ends with EndOfStringToken, whose literal is empty", () => {
    expect(tokenize("a")).toEqual([
      { tok: "IdentifierToken", literal: "a" },
      { tok: "EndOfStringToken", literal: "" },
    ]);
    expect(tokenize("   ")).toEqual([{ tok: "EndOfStringToken", literal: "" }]);
  });

  it("treats space, tab, CR and LF as separators and keeps everything else in identifiers", () => {
    expect(tokenize(" a\tb\rc\nd ").map((item) => item.literal)).toEqual(["a", "b", "c", "d", ""]);
    expect(tokenize("a.b/c-d_e").map((item) => item.literal)).toEqual(["a.b/c-d_e", ""]);
    expect(tokenize("a\u00a0b").map((item) => item.literal)).toEqual(["a\u00a0b", ""]);
  });
});

describe("label key and value validation", () => {
  it.each([
    "a",
    "A",
    "1",
    "app",
    "my.name",
    "MyName",
    "123-abc",
    "a_b",
    "example.com/MyName",
    "app.kubernetes.io/name",
    "a".repeat(63),
    `${"a".repeat(253)}/b`,
  ])("accepts key %j", (key) => {
    expect(isQualifiedName(key)).toEqual([]);
  });

  it.each([
    ["", ["name part must be non-empty", `name part ${NAME_REGEX_ERROR}`]],
    ["-a", [`name part ${NAME_REGEX_ERROR}`]],
    ["a-", [`name part ${NAME_REGEX_ERROR}`]],
    ["a b", [`name part ${NAME_REGEX_ERROR}`]],
    ["a".repeat(64), ["name part must be no more than 63 characters"]],
    ["/a", ["prefix part must be non-empty"]],
    ["Example.com/a", [`prefix part ${SUBDOMAIN_REGEX_ERROR}`]],
    [`${"a".repeat(254)}/b`, ["prefix part must be no more than 253 characters"]],
    ["example.com/", ["name part must be non-empty", `name part ${NAME_REGEX_ERROR}`]],
  ])("rejects key %j", (key, errors) => {
    expect(isQualifiedName(key)).toEqual(errors);
  });

  it("describes the whole format when a key has more than one '/'", () => {
    expect(isQualifiedName("a/b/c")).toEqual([
      `a qualified name ${NAME_REGEX_ERROR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ]);
  });

  it.each(["", "a", "MyValue", "my_value", "12345", "a.b-c_d", "v".repeat(63)])(
    "accepts value %j",
    (value) => {
      expect(isValidLabelValue(value)).toEqual([]);
    },
  );

  it.each([
    ["-a", [VALUE_REGEX_ERROR]],
    ["a.", [VALUE_REGEX_ERROR]],
    ["a b", [VALUE_REGEX_ERROR]],
    ["v".repeat(64), ["must be no more than 63 characters"]],
    ["-".repeat(64), ["must be no more than 63 characters", VALUE_REGEX_ERROR]],
  ])("rejects value %j", (value, errors) => {
    expect(isValidLabelValue(value)).toEqual(errors);
  });

  it("reports a bad key as a field error; with no path, as Go's nil path", () => {
    expect(validateLabelKey("ok")).toBeUndefined();
    expect(validateLabelKey("/x")?.message).toBe('<nil>: Invalid value: "/x": prefix part must be non-empty');
    expect(validateLabelKey("/x", "spec.key")?.message).toBe(
      'spec.key: Invalid value: "/x": prefix part must be non-empty',
    );
  });
});

describe("newRequirement", () => {
  it("builds a requirement for every operator", () => {
    expect(unwrap(newRequirement("x", "in", ["a", "b"]))).toEqual({
      key: "x",
      operator: "in",
      values: ["a", "b"],
    });
    expect(unwrap(newRequirement("x", "exists", []))).toEqual({ key: "x", operator: "exists", values: [] });
    for (const operator of ["=", "==", "!="] as const) {
      expect(newRequirement("x", operator, ["a"]).ok).toBe(true);
    }
    expect(newRequirement("x", "notin", [""]).ok).toBe(true);
    expect(newRequirement("x", "!", []).ok).toBe(true);
    expect(newRequirement("x", "gt", ["-5"]).ok).toBe(false); // an integer, but not a valid label value
    expect(newRequirement("x", "lt", ["10"]).ok).toBe(true);
  });

  it.each([
    [
      "in",
      [],
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      "notin",
      [],
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      "=",
      ["bar", "foo"],
      'values: Invalid value: []string{"bar", "foo"}: exact-match compatibility requires one single value',
    ],
    ["!=", [], "values: Invalid value: []string(nil): exact-match compatibility requires one single value"],
    [
      "exists",
      ["foo"],
      'values: Invalid value: []string{"foo"}: values set must be empty for exists and does not exist',
    ],
    [
      "!",
      ["foo"],
      'values: Invalid value: []string{"foo"}: values set must be empty for exists and does not exist',
    ],
    [
      "gt",
      ["1.5"],
      `values[0]: Invalid value: "1.5": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    [
      "lt",
      ["9223372036854775808"],
      `values[0]: Invalid value: "9223372036854775808": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
  ] as const)("rejects %s with values %j", (operator, values, message) => {
    expect(errorOf(newRequirement("x", operator, values))).toBe(message);
  });

  it("rejects invalid keys and values with their field paths", () => {
    expect(errorOf(newRequirement("-x", "exists", []))).toBe(
      `key: Invalid value: "-x": name part ${NAME_REGEX_ERROR}`,
    );
    expect(errorOf(newRequirement("x", "in", ["ok", "-bad"]))).toBe(
      `values[1][x]: Invalid value: "-bad": ${VALUE_REGEX_ERROR}`,
    );
  });

  it("reports several problems at once, in brackets", () => {
    expect(errorOf(newRequirement("x", "gt", ["1", "a"]))).toBe(
      `[values: Invalid value: []string{"1", "a"}: for 'Gt', 'Lt' operators, exactly one value is required, ` +
        `values[1]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer]`,
    );
  });

  it("rejects an operator it does not know (one that arrived as plain JSON)", () => {
    expect(errorOf(newRequirement("x", "like" as never, ["a"]))).toBe(
      'operator: Unsupported value: "like": supported values: "in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"',
    );
  });

  it("copies the values it was given", () => {
    const values = ["a"];
    const requirement = req("x", "in", values);
    values.push("b");
    expect(requirement.values).toEqual(["a"]);
  });
});

describe("matches", () => {
  const cases: [string, Requirement, Labels, boolean][] = [
    ["= with the value", req("x", "=", ["a"]), { x: "a" }, true],
    ["= with another value", req("x", "=", ["a"]), { x: "b" }, false],
    ["= without the key", req("x", "=", ["a"]), {}, false],
    ["= the empty value, label empty", req("x", "=", [""]), { x: "" }, true],
    ["= the empty value, no label", req("x", "=", [""]), {}, false],
    ["== with the value", req("x", "==", ["a"]), { x: "a" }, true],
    ["in, value in the set", req("x", "in", ["a", "b"]), { x: "b" }, true],
    ["in, value outside the set", req("x", "in", ["a", "b"]), { x: "c" }, false],
    ["in, without the key", req("x", "in", ["a"]), { y: "a" }, false],
    ["in is case-sensitive", req("x", "in", ["a"]), { x: "A" }, false],
    ["!= with another value", req("x", "!=", ["a"]), { x: "b" }, true],
    ["!= with the value", req("x", "!=", ["a"]), { x: "a" }, false],
    ["!= without the key", req("x", "!=", ["a"]), {}, true],
    ["notin, value outside the set", req("x", "notin", ["a", "b"]), { x: "c" }, true],
    ["notin, value in the set", req("x", "notin", ["a", "b"]), { x: "a" }, false],
    ["notin, without the key", req("x", "notin", ["a"]), { y: "a" }, true],
    ["exists with the key", req("x", "exists"), { x: "" }, true],
    ["exists without the key", req("x", "exists"), { y: "x" }, false],
    ["! without the key", req("x", "!"), { y: "x" }, true],
    ["! with the key", req("x", "!"), { x: "" }, false],
    ["gt, larger", req("x", "gt", ["9"]), { x: "10" }, true],
    ["gt, equal", req("x", "gt", ["9"]), { x: "9" }, false],
    ["gt, smaller", req("x", "gt", ["9"]), { x: "8" }, false],
    ["gt, leading zeros", req("x", "gt", ["9"]), { x: "010" }, true],
    ["gt, label not an integer", req("x", "gt", ["1"]), { x: "abc" }, false],
    ["gt, label a decimal", req("x", "gt", ["1"]), { x: "2.5" }, false],
    ["gt, label beyond int64", req("x", "gt", ["1"]), { x: "9223372036854775808" }, false],
    ["gt, int64 max", req("x", "gt", ["1"]), { x: "9223372036854775807" }, true],
    ["gt, without the key", req("x", "gt", ["1"]), {}, false],
    ["lt, smaller", req("x", "lt", ["10"]), { x: "9" }, true],
    ["lt, larger", req("x", "lt", ["10"]), { x: "11" }, false],
    ["lt, without the key", req("x", "lt", ["10"]), {}, false],
    ["a label named like an Object.prototype member", req("constructor", "exists"), {}, false],
    ["!= on a label named like an Object.prototype member", req("toString", "!=", ["a"]), {}, true],
  ];
  it.each(cases)("%s", (_name, requirement, labels, expected) => {
    expect(matches(requirement, labels)).toBe(expected);
  });

  it("never matches gt/lt whose bound is not a single integer (built by hand, bypassing newRequirement)", () => {
    expect(matches({ key: "x", operator: "gt", values: ["a"] }, { x: "5" })).toBe(false);
    expect(matches({ key: "x", operator: "lt", values: ["1", "9"] }, { x: "5" })).toBe(false);
  });
});

describe("selectorMatches", () => {
  const labels = { foo: "bar", baz: "blah" };

  it("ANDs the requirements", () => {
    expect(selectorMatches(parsed("foo=bar,baz=blah"), labels)).toBe(true);
    expect(selectorMatches(parsed("foo=bar,baz=other"), labels)).toBe(false);
    expect(selectorMatches(parsed("foo=bar,foobar=bar,baz=blah"), labels)).toBe(false);
    expect(selectorMatches(parsed("x!=y,z!=w"), { x: "z", z: "w" })).toBe(false);
    expect(selectorMatches(parsed("x!=y,z!=w"), { x: "z", z: "a" })).toBe(true);
  });

  it("matches everything with an empty selector, nothing with nothing()", () => {
    expect(selectorMatches(parsed(""), labels)).toBe(true);
    expect(selectorMatches(parsed(""), {})).toBe(true);
    expect(selectorMatches(everything(), {})).toBe(true);
    expect(selectorMatches(nothing(), labels)).toBe(false);
    expect(selectorMatches(nothing(), {})).toBe(false);
  });

  it.each([
    ["x=y", { x: "y" }, true],
    ["notin=in", { notin: "in" }, true],
    ["x", { x: "z" }, true],
    ["!x", { y: "z" }, true],
    ["x>1", { x: "2" }, true],
    ["x<1", { x: "0" }, true],
    ["x=z", {}, false],
    ["x", { y: "z" }, false],
    ["!x", { x: "z" }, false],
    ["x>1", { x: "0" }, false],
    ["x<1", { x: "2" }, false],
    ["env notin (prod),tier", { tier: "web" }, true],
    ["env in (dev,staging),!canary", { env: "dev", canary: "true" }, false],
  ] as const)("%j against %j is %s", (selector, labelSet, expected) => {
    expect(selectorMatches(parsed(selector), labelSet)).toBe(expected);
  });

  it("matches the map form with selectorFromSet", () => {
    expect(selectorMatches(selectorFromSet({}), labels)).toBe(true);
    expect(selectorMatches(selectorFromSet({ foo: "bar" }), labels)).toBe(true);
    expect(selectorMatches(selectorFromSet({ foo: "bar", baz: "blah" }), labels)).toBe(true);
    expect(selectorMatches(selectorFromSet({ foo: "bar", baz: "x" }), labels)).toBe(false);
    expect(selectorToString(selectorFromSet({ b: "2", a: "1" }))).toBe("a=1,b=2");
  });
});

describe("parse", () => {
  it("parses every operator", () => {
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

  it("parses the empty string as the selector that matches everything", () => {
    expect(parsed("")).toEqual({ requirements: [] });
    expect(parsed("  \t")).toEqual({ requirements: [] });
    expect(isEmptySelector(parsed(""))).toBe(true);
    expect(isEmptySelector(parsed("x"))).toBe(false);
    expect(isEmptySelector(nothing())).toBe(false);
  });

  it("ignores whitespace between tokens", () => {
    expect(parsed(" x = a , y in ( b , c ) , ! z ")).toEqual(parsed("x=a,y in (b,c),!z"));
    expect(parsed("x\tin\r(a)\n")).toEqual(parsed("x in (a)"));
    expect(parsed("x in(a)")).toEqual(parsed("x in (a)"));
  });

  it("reads a missing value as the empty string", () => {
    expect(parsed("x=").requirements).toEqual([{ key: "x", operator: "=", values: [""] }]);
    expect(parsed("x= ,z= ").requirements).toEqual([
      { key: "x", operator: "=", values: [""] },
      { key: "z", operator: "=", values: [""] },
    ]);
    expect(parsed("x in ()").requirements).toEqual([{ key: "x", operator: "in", values: [""] }]);
    expect(parsed("x in (,a)").requirements[0].values).toEqual(["", "a"]);
    expect(parsed("x in (a,)").requirements[0].values).toEqual(["", "a"]);
    expect(parsed("x in (a,,b)").requirements[0].values).toEqual(["", "a", "b"]);
    expect(parsed("x notin (,)").requirements[0].values).toEqual([""]);
  });

  it("treats in/notin as words outside the operator position", () => {
    expect(parsed("in=a").requirements).toEqual([{ key: "in", operator: "=", values: ["a"] }]);
    expect(parsed("notin=in").requirements).toEqual([{ key: "notin", operator: "=", values: ["in"] }]);
    expect(parsed("in in (in,notin)").requirements).toEqual([
      { key: "in", operator: "in", values: ["in", "notin"] },
    ]);
    expect(parsed("in").requirements).toEqual([{ key: "in", operator: "exists", values: [] }]);
  });

  it("sorts requirements by key and set values, dropping duplicate values", () => {
    expect(parsed("x=a,a=x").requirements.map((r) => r.key)).toEqual(["a", "x"]);
    expect(parsed("x in (c,a,b,a)").requirements[0].values).toEqual(["a", "b", "c"]);
    expect(parsed("b=1,a=2,a!=3").requirements).toEqual([
      { key: "a", operator: "=", values: ["2"] },
      { key: "a", operator: "!=", values: ["3"] },
      { key: "b", operator: "=", values: ["1"] },
    ]);
  });

  it("accepts prefixed keys and the full value alphabet", () => {
    expect(parsed("app.kubernetes.io/name=my_app-1.2").requirements).toEqual([
      { key: "app.kubernetes.io/name", operator: "=", values: ["my_app-1.2"] },
    ]);
  });

  it.each([
    ["x=a,", "found '', expected: identifier after ','"],
    ["x,,y", "found ',', expected: identifier after ','"],
    ["x=a,)", "found ')', expected: identifier after ','"],
    [",x", "found ',', expected: !, identifier, or 'end of string'"],
    ["!=a", "found '!=', expected: !, identifier, or 'end of string'"],
    ["(x)", "found '(', expected: !, identifier, or 'end of string'"],
    ["x==a==b", "found '==', expected: ',' or 'end of string'"],
    ["!x=a", "found '=', expected: ',' or 'end of string'"],
    ["!x y", "found 'y', expected: ',' or 'end of string'"],
    ["x in (a))", "found ')', expected: ',' or 'end of string'"],
    ["x in (a)y", "found 'y', expected: ',' or 'end of string'"],
    ["x in (a", "unable to parse requirement: found '', expected: ',' or ')'"],
    ["x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ["x in (", "unable to parse requirement: found '', expected: ',', ')' or identifier"],
    ["x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ["x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"],
    ["x in a", "unable to parse requirement: found 'a' expected: '('"],
    ["x in", "unable to parse requirement: found '' expected: '('"],
    ["x y", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"],
    ["x (", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"],
    ["x!", "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"],
    ["xin(a)", "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"],
    ["!", "unable to parse requirement: found '', expected: identifier"],
    ["!!x", "unable to parse requirement: found '!', expected: identifier"],
    ["x=(", "unable to parse requirement: found '(', expected: identifier"],
    ["x=!a", "unable to parse requirement: found '!', expected: identifier"],
    ["x>=1", "unable to parse requirement: found '=', expected: identifier"],
  ])("rejects %j: %s", (input, message) => {
    expect(errorOf(parse(input))).toBe(message);
  });

  it("rejects invalid keys with upstream's <nil> field path", () => {
    expect(errorOf(parse("x/y/z"))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "x/y/z": a qualified name ${NAME_REGEX_ERROR} ` +
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    );
    expect(errorOf(parse("/x=a"))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "/x": prefix part must be non-empty`,
    );
    expect(errorOf(parse("!-x"))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "-x": name part ${NAME_REGEX_ERROR}`,
    );
    expect(errorOf(parse(`${"k".repeat(64)}=a`))).toBe(
      `unable to parse requirement: <nil>: Invalid value: "${"k".repeat(64)}": name part must be no more than 63 characters`,
    );
  });

  it("rejects invalid values", () => {
    expect(errorOf(parse("x=a||y=b"))).toBe(
      `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${VALUE_REGEX_ERROR}`,
    );
    expect(errorOf(parse("x in (a,-b)"))).toBe(
      `unable to parse requirement: values[0][x]: Invalid value: "-b": ${VALUE_REGEX_ERROR}`,
    );
    expect(errorOf(parse(`x=${"v".repeat(64)}`))).toBe(
      `unable to parse requirement: values[0][x]: Invalid value: "${"v".repeat(64)}": must be no more than 63 characters`,
    );
  });

  it("requires gt/lt values to be integers that are also valid label values", () => {
    expect(errorOf(parse("x<a"))).toBe(
      `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`,
    );
    expect(errorOf(parse("x>"))).toBe(
      `unable to parse requirement: values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer`,
    );
    expect(errorOf(parse("x>1.5"))).toBe(
      `unable to parse requirement: values[0]: Invalid value: "1.5": for 'Gt', 'Lt' operators, the value must be an integer`,
    );
    // A negative bound is an integer, but "-1" does not start with an alphanumeric character.
    expect(errorOf(parse("x>-1"))).toBe(
      `unable to parse requirement: values[0][x]: Invalid value: "-1": ${VALUE_REGEX_ERROR}`,
    );
    expect(parsed("x>007").requirements).toEqual([{ key: "x", operator: "gt", values: ["007"] }]);
  });

  it("follows v1.32 on an even run of commas before ')' (accepted from v1.35)", () => {
    expect(errorOf(parse("x in (a,,)"))).toBe(
      "unable to parse requirement: found ')', expected: ',', or identifier",
    );
    expect(errorOf(parse("x in (,,)"))).toBe(
      "unable to parse requirement: found ')', expected: ',', or identifier",
    );
    expect(parsed("x in (a,,,)").requirements[0].values).toEqual(["", "a"]);
    expect(parsed("x in (,,,)").requirements[0].values).toEqual([""]);
  });
});

describe("canonical string form", () => {
  it.each([
    ["x=a,y=b,z=c", "x=a,y=b,z=c"],
    ["", ""],
    ["x!=a,y=b", "x!=a,y=b"],
    ["x=", "x="],
    ["x= ", "x="],
    ["x=,z= ", "x=,z="],
    ["!x", "!x"],
    ["x>1", "x>1"],
    ["x>1,z<5", "x>1,z<5"],
    ["x==a", "x==a"],
    ["y , x", "x,y"],
    ["x in (b,a,a)", "x in (a,b)"],
    ["x notin ( b , a )", "x notin (a,b)"],
    ["x in ()", "x in ()"],
    ["x in (a,)", "x in (,a)"],
    ["z,b!=2,!a,c in (3)", "!a,b!=2,c in (3),z"],
  ])("prints %j as %j", (input, canonical) => {
    expect(selectorToString(parsed(input))).toBe(canonical);
  });

  it("gives the same text however the selector was written", () => {
    expect(selectorToString(parsed("x=a,a=x"))).toBe(selectorToString(parsed("a=x,x=a")));
  });

  it.each(["x in (b,a),y", "!a,b notin (c,d),e>3,f<4,g==h,i!=j", "app.kubernetes.io/name=web,tier in (,fe)"])(
    "round-trips %j",
    (input) => {
      const once = parsed(input);
      const text = selectorToString(once);
      expect(parsed(text)).toEqual(once);
      expect(selectorToString(parsed(text))).toBe(text);
    },
  );

  it("sorts set values when printing a requirement built in any order", () => {
    expect(requirementToString(req("x", "in", ["b", "a"]))).toBe("x in (a,b)");
    expect(requirementToString(req("x", "exists"))).toBe("x");
    expect(selectorToString(nothing())).toBe("");
  });
});

describe("labelSelectorAsSelector", () => {
  it("selects nothing for an absent selector and everything for an empty one", () => {
    expect(unwrap(labelSelectorAsSelector(undefined))).toEqual(nothing());
    expect(unwrap(labelSelectorAsSelector(null))).toEqual(nothing());
    expect(unwrap(labelSelectorAsSelector({}))).toEqual(everything());
    expect(unwrap(labelSelectorAsSelector({ matchLabels: {}, matchExpressions: [] }))).toEqual(everything());
  });

  it("turns matchLabels into '=' and each expression into its operator, sorted by key", () => {
    const selector = unwrap(
      labelSelectorAsSelector({
        matchLabels: { tier: "web", app: "shop" },
        matchExpressions: [
          { key: "env", operator: "NotIn", values: ["prod", "dev"] },
          { key: "canary", operator: "DoesNotExist" },
          { key: "zone", operator: "Exists", values: [] },
          { key: "b", operator: "In", values: ["1"] },
        ],
      }),
    );
    expect(selectorToString(selector)).toBe("app=shop,b in (1),!canary,env notin (dev,prod),tier=web,zone");
    expect(selectorMatches(selector, { app: "shop", tier: "web", b: "1", zone: "a" })).toBe(true);
    expect(selectorMatches(selector, { app: "shop", tier: "web", b: "1", zone: "a", env: "prod" })).toBe(
      false,
    );
    expect(selectorMatches(selector, { app: "shop", tier: "web", b: "1" })).toBe(false);
  });

  it("keeps the values an expression was given, in their order", () => {
    const selector = unwrap(
      labelSelectorAsSelector({ matchExpressions: [{ key: "x", operator: "In", values: ["b", "a"] }] }),
    );
    expect(selector.requirements).toEqual([{ key: "x", operator: "in", values: ["b", "a"] }]);
  });

  it.each([
    [
      { matchExpressions: [{ key: "x", operator: "In" as const, values: [] }] },
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      { matchExpressions: [{ key: "x", operator: "NotIn" as const }] },
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    ],
    [
      { matchExpressions: [{ key: "x", operator: "Exists" as const, values: ["a"] }] },
      'values: Invalid value: []string{"a"}: values set must be empty for exists and does not exist',
    ],
    [
      { matchExpressions: [{ key: "x", operator: "DoesNotExist" as const, values: ["a"] }] },
      'values: Invalid value: []string{"a"}: values set must be empty for exists and does not exist',
    ],
    [
      { matchExpressions: [{ key: "x", operator: "Gt" as never, values: ["1"] }] },
      '"Gt" is not a valid label selector operator',
    ],
    [{ matchLabels: { "-x": "a" } }, `key: Invalid value: "-x": name part ${NAME_REGEX_ERROR}`],
    [{ matchLabels: { x: "a b" } }, `values[0][x]: Invalid value: "a b": ${VALUE_REGEX_ERROR}`],
  ])("rejects %j", (labelSelector, message) => {
    expect(errorOf(labelSelectorAsSelector(labelSelector))).toBe(message);
  });
});
