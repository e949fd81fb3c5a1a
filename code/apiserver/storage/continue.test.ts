import { describe, expect, it } from "vitest";
import {
  decodeContinue,
  ErrEmptyStartKey,
  ErrInvalidStartRV,
  ErrUnrecognizedEncodedVersion,
  encodeContinue,
} from "./continue.ts";

const prefix = "/registry/pods/";
const token = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");

describe("continue tokens", () => {
  it("encode as upstream does: base64url JSON of v, rv and the key under the prefix", () => {
    const t = encodeContinue("/registry/pods/default/web\u0000", prefix, 42);
    expect(t).not.toMatch(/[=+/]/);
    expect(JSON.parse(Buffer.from(t, "base64url").toString())).toEqual({
      v: "meta.k8s.io/v1",
      rv: 42,
      start: "default/web\u0000",
    });
    expect(decodeContinue(t, prefix)).toEqual({ key: "/registry/pods/default/web\u0000", rv: 42 });
    expect(() => encodeContinue("/registry/secrets/x", prefix, 1)).toThrow(/key prefix do not match/);
  });

  it.each([
    [{ v: "meta.k8s.io/v1", rv: 0, start: "a" }, ErrInvalidStartRV],
    [{ v: "meta.k8s.io/v1", rv: 5, start: "" }, ErrEmptyStartKey],
    [{ v: "v2", rv: 5, start: "a" }, `${ErrUnrecognizedEncodedVersion} v2`],
    [{ v: "meta.k8s.io/v1", rv: 5, start: "../secrets/x" }, "continue key is not valid: ../secrets/x"],
    [{ v: "meta.k8s.io/v1", rv: 5, start: "a//b" }, "continue key is not valid: a//b"],
  ])("refuses %j", (body, error) => {
    expect(decodeContinue(token(body), prefix)).toEqual({ error });
  });

  it("refuses what is not base64url JSON, and accepts rv -1 (continue at the newest revision)", () => {
    expect(decodeContinue("a+b=", prefix)).toEqual({
      error: "continue key is not valid: illegal base64 data",
    });
    expect((decodeContinue("bm90IGpzb24", prefix) as { error: string }).error).toMatch(
      /^continue key is not valid: /,
    );
    expect(decodeContinue(token({ v: "meta.k8s.io/v1", rv: -1, start: "default/b" }), prefix)).toEqual({
      key: "/registry/pods/default/b",
      rv: -1,
    });
  });
});
