import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { AnonymousAuthenticator } from "./anonymous.ts";
import { AuthenticationError, type Authenticator, type TokenAuthenticator } from "./authenticator.ts";
import { BearerTokenAuthenticator, bearerToken } from "./bearertoken.ts";
import { AuthenticatedGroupAdder } from "./group-adder.ts";
import { UnionAuthenticator } from "./union.ts";

const req = (authorization?: string) =>
  ({
    headers: authorization === undefined ? {} : { authorization },
    socket: {},
  }) as unknown as IncomingMessage;
const says = (answer: "null" | "error" | string): Authenticator => ({
  async authenticateRequest() {
    if (answer === "null") return null;
    if (answer === "error") throw new AuthenticationError(`bad credential`);
    return { user: { name: answer, groups: [] } };
  },
});

describe("bearerToken (the Authorization header)", () => {
  it("takes the token after a case-insensitive Bearer", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc")).toBe("abc");
    expect(bearerToken("BEARER abc")).toBe("abc");
    expect(bearerToken("  Bearer abc  ")).toBe("abc");
  });
  it("presents no token for no header, another scheme, an empty token, or a space before it", () => {
    for (const h of [undefined, "", "Basic YWxpY2U6cHc=", "Bearer", "Bearer ", "Bearer  abc", "Bearerabc"]) {
      expect(bearerToken(h), String(h)).toBeUndefined();
    }
  });
  it("turns a token nobody accepts into an error, not 'not mine'", async () => {
    const none: TokenAuthenticator = { authenticateToken: async () => null };
    const auth = new BearerTokenAuthenticator([none]);
    await expect(auth.authenticateRequest(req("Bearer nope"))).rejects.toThrow("invalid bearer token");
    expect(await auth.authenticateRequest(req())).toBeNull();
  });
});

describe("the union", () => {
  it("answers with the first user found, asking no further", async () => {
    let asked = 0;
    const counting: Authenticator = {
      async authenticateRequest() {
        asked++;
        return null;
      },
    };
    const union = new UnionAuthenticator([says("null"), says("jane"), counting]);
    expect((await union.authenticateRequest(req()))?.user.name).toBe("jane");
    expect(asked).toBe(0);
  });
  it("goes on after an error, and throws the errors if no one accepts", async () => {
    expect(
      (await new UnionAuthenticator([says("error"), says("bob")]).authenticateRequest(req()))?.user.name,
    ).toBe("bob");
    await expect(
      new UnionAuthenticator([says("error"), says("null")]).authenticateRequest(req()),
    ).rejects.toThrow(AuthenticationError);
    expect(await new UnionAuthenticator([says("null")]).authenticateRequest(req())).toBeNull();
  });
  it("fail-on-error stops at the first error: a bad credential never becomes anonymous", async () => {
    const withAnonymous = new UnionAuthenticator([says("error"), new AnonymousAuthenticator()], true);
    await expect(withAnonymous.authenticateRequest(req())).rejects.toThrow("bad credential");
    const anon = await new UnionAuthenticator(
      [says("null"), new AnonymousAuthenticator()],
      true,
    ).authenticateRequest(req());
    expect(anon?.user).toEqual({ name: "system:anonymous", groups: ["system:unauthenticated"] });
  });
});

describe("the authenticated group adder", () => {
  it("adds system:authenticated once, never to anonymous, never in place", async () => {
    const shared = { user: { name: "jane", groups: ["dev"] } };
    const adder = new AuthenticatedGroupAdder({ authenticateRequest: async () => shared });
    expect((await adder.authenticateRequest(req()))?.user.groups).toEqual(["dev", "system:authenticated"]);
    expect((await adder.authenticateRequest(req()))?.user.groups).toEqual(["dev", "system:authenticated"]);
    expect(shared.user.groups).toEqual(["dev"]);
    const anonymous = new AuthenticatedGroupAdder(new AnonymousAuthenticator());
    expect((await anonymous.authenticateRequest(req()))?.user.groups).toEqual(["system:unauthenticated"]);
    const already = new AuthenticatedGroupAdder({
      authenticateRequest: async () => ({ user: { name: "x", groups: ["system:authenticated"] } }),
    });
    expect((await already.authenticateRequest(req()))?.user.groups).toEqual(["system:authenticated"]);
  });
});
