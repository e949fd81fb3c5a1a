import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthenticationConfigError, newAuthenticator } from "./config.ts";

const req = (authorization?: string) =>
  ({ headers: authorization ? { authorization } : {}, socket: {} }) as unknown as IncomingMessage;

describe("newAuthenticator", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "authn-config-"));
    await writeFile(join(dir, "tokens.csv"), 'tok,jane,1,"dev"\n');
    await writeFile(join(dir, "short.csv"), "tok,jane\n");
    await writeFile(join(dir, "empty.pem"), "no certificates here\n");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("token file, then the group adder, then anonymous — and a bad token stays an error", async () => {
    const auth = await newAuthenticator({ tokenAuthFile: join(dir, "tokens.csv") });
    expect((await auth.authenticateRequest(req("Bearer tok")))?.user).toEqual({
      name: "jane",
      uid: "1",
      groups: ["dev", "system:authenticated"],
    });
    expect((await auth.authenticateRequest(req()))?.user.name).toBe("system:anonymous");
    await expect(auth.authenticateRequest(req("Bearer nope"))).rejects.toThrow("invalid bearer token");
  });

  it("with anonymous off, no credential is no user", async () => {
    const auth = await newAuthenticator({ tokenAuthFile: join(dir, "tokens.csv"), anonymousAuth: false });
    expect(await auth.authenticateRequest(req())).toBeNull();
    const nothing = await newAuthenticator({ anonymousAuth: false });
    expect(await nothing.authenticateRequest(req())).toBeNull();
  });

  it("refuses a bad file at start, naming the flag and the file", async () => {
    await expect(newAuthenticator({ tokenAuthFile: join(dir, "short.csv") })).rejects.toThrow(
      /^invalid --token-auth-file ".*short\.csv": token file '.*' must have at least 3 columns/,
    );
    await expect(newAuthenticator({ tokenAuthFile: join(dir, "missing.csv") })).rejects.toThrow(
      AuthenticationConfigError,
    );
    await expect(newAuthenticator({ clientCAFile: join(dir, "empty.pem") })).rejects.toThrow(
      /invalid --client-ca-file .* does not contain any valid/,
    );
  });
});
