import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AuthenticationError } from "./authenticator.ts";
import { parseTokenFile, readCSV, TokenFileAuthenticator } from "./tokenfile.ts";

describe("readCSV (encoding/csv)", () => {
  it("splits on commas, keeps commas and doubled quotes inside quotes, skips blank lines", () => {
    expect(readCSV('a,b,c\n\n"x,y","say ""hi""",\r\nlast')).toEqual([
      ["a", "b", "c"],
      ["x,y", 'say "hi"', ""],
      ["last"],
    ]);
  });

  it("reads a quoted field across lines", () => {
    expect(readCSV('t,"multi\nline",u')).toEqual([["t", "multi\nline", "u"]]);
  });

  it("refuses a bare quote and a quote left open, in Go's words", () => {
    expect((readCSV('tok,ja"ne,1') as Error).message).toBe(
      'parse error on line 1, column 7: bare " in non-quoted-field',
    );
    expect(readCSV('tok,"jane')).toBeInstanceOf(AuthenticationError);
    expect(readCSV('tok,"jane"x,1')).toBeInstanceOf(AuthenticationError);
  });
});

describe("the token file", () => {
  const file = [
    "s3cret,alice,1001",
    'abc123,bob,1002,"dev,ops"',
    "plain,carol,1003,single,ignored-column",
    ",nobody,1004",
    "dup,first,1",
    "dup,second,2",
  ].join("\n");

  it("reads token, user, uid and the quoted groups", async () => {
    const tokens = parseTokenFile(file, "/t.csv") as Map<string, unknown>;
    expect(tokens.get("s3cret")).toEqual({ name: "alice", uid: "1001", groups: [] });
    expect(tokens.get("abc123")).toEqual({ name: "bob", uid: "1002", groups: ["dev", "ops"] });
    expect(tokens.get("plain")).toEqual({ name: "carol", uid: "1003", groups: ["single"] });
    expect(tokens.has("")).toBe(false); // an empty token is skipped
    expect(tokens.get("dup")).toMatchObject({ name: "second" }); // the last line wins
  });

  it("refuses a line with fewer than 3 columns, naming the file", () => {
    expect((parseTokenFile("tok,user\n", "/t.csv") as Error).message).toBe(
      "token file '/t.csv' must have at least 3 columns (token, user name, user uid), found 2",
    );
  });

  it("accepts the whole token only: no prefix, no other case, no extra space", async () => {
    const auth = new TokenFileAuthenticator(parseTokenFile(file, "/t.csv") as Map<string, never>);
    expect((await auth.authenticateToken("abc123"))?.user.name).toBe("bob");
    for (const wrong of ["abc", "abc1234", "ABC123", " abc123", ""]) {
      expect(await auth.authenticateToken(wrong), wrong).toBeNull();
    }
  });

  it("does not add system:authenticated itself (the union's group adder does)", async () => {
    const auth = new TokenFileAuthenticator(parseTokenFile(file, "/t.csv") as Map<string, never>);
    expect((await auth.authenticateToken("abc123"))?.user.groups).toEqual(["dev", "ops"]);
  });

  it("reads --token-auth-file from disk, and refuses a bad one", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tokenfile-"));
    try {
      await writeFile(join(dir, "ok.csv"), file);
      const auth = await TokenFileAuthenticator.fromFile(join(dir, "ok.csv"));
      expect((await auth.authenticateToken("s3cret"))?.user.name).toBe("alice");
      await writeFile(join(dir, "bad.csv"), "only-a-token\n");
      await expect(TokenFileAuthenticator.fromFile(join(dir, "bad.csv"))).rejects.toThrow(
        /at least 3 columns/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
