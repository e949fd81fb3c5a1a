import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AnonymousAuthenticator } from "../../../code/apiserver/authn/anonymous.ts";
import type { Authenticator } from "../../../code/apiserver/authn/authenticator.ts";
import { AuthenticatedGroupAdder } from "../../../code/apiserver/authn/group-adder.ts";
import { UnionAuthenticator } from "../../../code/apiserver/authn/union.ts";
import { type APIServer, startAPIServer } from "../../../code/apiserver/server.ts";
import { authenticateBearer, parseTokenFile } from "./token-file.ts";

const file = [
  "s3cret-token,jane,1001",
  'abc123,bob,1002,"dev,ops"',
  "",
  "t-carol,carol,1003,single,ignored",
  ",nobody,1004",
].join("\n");

describe("parseTokenFile", () => {
  it("reads token, user name and uid", () => {
    expect(parseTokenFile(file).get("s3cret-token")).toEqual({ name: "jane", uid: "1001", groups: [] });
  });
  it("reads a quoted groups column, commas and all", () => {
    expect(parseTokenFile(file).get("abc123")).toEqual({ name: "bob", uid: "1002", groups: ["dev", "ops"] });
  });
  it("takes one unquoted group, ignores later columns, skips blank lines and empty tokens", () => {
    const tokens = parseTokenFile(file);
    expect(tokens.get("t-carol")).toEqual({ name: "carol", uid: "1003", groups: ["single"] });
    expect([...tokens.keys()].sort()).toEqual(["abc123", "s3cret-token", "t-carol"]);
  });
  it('reads "" inside quotes as one quote', () => {
    expect(parseTokenFile('tok,"the ""admin""",7').get("tok")?.name).toBe('the "admin"');
  });
  it("refuses a line with fewer than 3 columns", () => {
    expect(() => parseTokenFile("tok,user\n")).toThrow();
  });
});

describe("authenticateBearer", () => {
  const tokens = parseTokenFile(file);
  it("finds the user of `Bearer <token>`, with exactly the file's groups", () => {
    expect(authenticateBearer("Bearer abc123", tokens)?.user).toEqual({
      name: "bob",
      uid: "1002",
      groups: ["dev", "ops"],
    });
  });
  it("matches the scheme case-insensitively", () => {
    for (const h of ["bearer abc123", "BEARER abc123", "  Bearer abc123  "]) {
      expect(authenticateBearer(h, tokens)?.user.name, h).toBe("bob");
    }
  });
  it("says 'not mine' (null) when the header presents no bearer token", () => {
    for (const h of [undefined, "", "Basic YWxpY2U6cHc=", "Bearer", "Bearer "]) {
      expect(authenticateBearer(h, tokens), String(h)).toBeNull();
    }
  });
  it("throws for a token that is not in the file: a prefix, a longer token, another case", () => {
    for (const t of ["abc", "abc1234", "ABC123", "s3cret", "s3cret-token-and-more", "nope"]) {
      expect(() => authenticateBearer(`Bearer ${t}`, tokens), t).toThrow();
    }
  });
});

describe("plugged into the real API server, behind the union, the group adder and anonymous", () => {
  let server: APIServer;
  beforeAll(async () => {
    const tokens = parseTokenFile(file);
    const learner: Authenticator = {
      authenticateRequest: async (req: IncomingMessage) =>
        authenticateBearer(req.headers.authorization, tokens),
    };
    // As authn/config.ts wires them: a bad token must stay a 401, never become anonymous.
    const authenticator = new UnionAuthenticator(
      [new AuthenticatedGroupAdder(new UnionAuthenticator([learner])), new AnonymousAuthenticator()],
      true,
    );
    server = await startAPIServer({ insecurePort: 0, authenticator });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function whoami(authorization?: string) {
    const res = await fetch(`${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
    });
    return { status: res.status, body: await res.json() };
  }

  it("a good token is its user, with system:authenticated added once", async () => {
    const r = await whoami("Bearer abc123");
    expect(r.status).toBe(201);
    expect(r.body.status.userInfo).toEqual({
      username: "bob",
      uid: "1002",
      groups: ["dev", "ops", "system:authenticated"],
    });
  });
  it("a lower-case scheme is the same user", async () => {
    expect((await whoami("bearer s3cret-token")).body.status.userInfo.username).toBe("jane");
  });
  it("no token is anonymous", async () => {
    expect((await whoami()).body.status.userInfo).toEqual({
      username: "system:anonymous",
      groups: ["system:unauthenticated"],
    });
  });
  it("a bad token is 401 Unauthorized, with no hint why", async () => {
    const r = await whoami("Bearer s3cret-token-and-more");
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({
      kind: "Status",
      reason: "Unauthorized",
      message: "Unauthorized",
      code: 401,
    });
  });
});
