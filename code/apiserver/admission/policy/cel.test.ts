import { describe, expect, it } from "vitest";
import { CELEvaluationError, compile, newActivation, type Program } from "./cel.ts";
import { fromCEL, toCEL } from "./json-integers.ts";

const program = (expression: string, hasParams = false): Program => {
  const r = compile(expression, "any", hasParams);
  if (!r.ok) throw new Error(r.detail);
  return r.program;
};

describe("the CEL seam", () => {
  it("reports a syntax error with upstream's prefix and the position", () => {
    expect(compile("object.spec.replicas <= ", "bool", false)).toEqual({
      ok: false,
      detail: "compilation failed: ERROR: <input>:1:25: Unexpected token: EOF",
    });
    expect(compile("a ==\n  ", "bool", false)).toMatchObject({
      detail: expect.stringMatching(/<input>:2:3:/),
    });
  });

  it("declares params only for a policy with a paramKind", () => {
    expect(compile("params.x == 1", "bool", false)).toEqual({
      ok: false,
      detail: "compilation failed: ERROR: <input>:1:1: Unknown variable: params",
    });
    expect(compile("params.x == 1", "bool", true).ok).toBe(true);
  });

  it("checks the result type: bool for a validation, string for a message; dyn passes both", () => {
    expect(compile("'a'", "bool", false)).toEqual({
      ok: false,
      detail: "must evaluate to bool but got string",
    });
    expect(compile("1 == 1", "string", false)).toEqual({
      ok: false,
      detail: "must evaluate to string but got bool",
    });
    expect(compile("object.metadata.name", "string", false).ok).toBe(true);
  });

  it("reads JSON integers as CEL ints, so arithmetic and string() behave", () => {
    const act = newActivation({ object: { spec: { replicas: 3, ratio: 0.5 } }, request: {} }, []);
    expect(program("object.spec.replicas + 1").run(act)).toBe(4n);
    expect(program("string(object.spec.replicas)").run(act)).toBe("3");
    expect(program("object.spec.ratio * 2.0").run(act)).toBe(1);
    expect(fromCEL(toCEL({ a: [1, 2.5], b: null }))).toEqual({ a: [1, 2.5], b: null });
  });

  it("evaluates a variable at most once, however often it is read, and keeps its error", () => {
    let calls = 0;
    const counted: Program = {
      expression: "counted",
      run: () => {
        calls++;
        return 2n;
      },
    };
    const failing: Program = {
      expression: "failing",
      run: () => {
        throw new CELEvaluationError("expression 'failing' resulted in error: boom");
      },
    };
    const act = newActivation({ request: {} }, [
      { name: "two", program: counted },
      { name: "broken", program: failing },
    ]);
    expect(program("variables.two * variables.two + variables.two").run(act)).toBe(6n);
    expect(calls).toBe(1);
    expect(() => program("variables.broken == 1").run(act)).toThrow(
      "expression 'failing' resulted in error: boom",
    );
    expect(() => program("object.spec.x").run(act)).toThrow(
      /^expression 'object.spec.x' resulted in error: /,
    );
  });
});
