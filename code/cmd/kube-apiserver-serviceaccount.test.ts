import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePKI, type PKILayout } from "../pki/certs.ts";
import { parseAPIServerFlags } from "./kube-apiserver.ts";
import { startCommand, waitFor } from "./testing/command-process.ts";

describe("kube-apiserver's service-account flags", () => {
  let dir: string;
  let layout: PKILayout;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sa-flags-"));
    const pki = await ensurePKI({ dir, encryptionAlgorithm: "ECDSA-P256" });
    if (!("layout" in pki)) throw pki;
    layout = pki.layout;
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const problem = (argv: string[]) => {
    const r = parseAPIServerFlags(argv);
    return r instanceof Error ? r.message : undefined;
  };

  it("without any, there are no service-account tokens (chapters 1 and 2 start as before)", () => {
    expect(parseAPIServerFlags([])).toMatchObject({ run: { serviceAccountTokens: undefined } });
  });

  it("reads the PKI's sa.key and sa.pub; the first issuer signs, every issuer is accepted, the audience defaults to the first", () => {
    const r = parseAPIServerFlags([
      `--service-account-signing-key-file=${layout.serviceAccountKey}`,
      `--service-account-key-file=${layout.serviceAccountPublicKey}`,
      `--service-account-key-file=${layout.serviceAccountKey}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      "--service-account-issuer=https://old.example",
      "--service-account-max-token-expiration=48h",
    ]);
    if (!("run" in r)) throw new Error(String(r));
    const run = r.run;
    expect(run.serviceAccountTokens).toMatchObject({
      apiAudiences: ["https://kubernetes.default.svc.cluster.local"],
      maxExpirationSeconds: 48 * 3600,
      extendExpiration: true,
      generator: { iss: "https://kubernetes.default.svc.cluster.local", alg: "ES256" },
    });
    expect(run.authentication?.serviceAccounts).toMatchObject({
      issuers: ["https://kubernetes.default.svc.cluster.local", "https://old.example"],
      apiAudiences: ["https://kubernetes.default.svc.cluster.local"],
    });
    // The public key of sa.pub and the public half of sa.key.
    expect(run.authentication?.serviceAccounts?.publicKeys).toHaveLength(2);
  });

  it("says, as upstream does, which required flag is missing", () => {
    expect(problem(["--service-account-issuer=https://k8s.example"])).toBe(
      "kube-apiserver: [service-account-key-file is a required flag, --service-account-signing-key-file and --service-account-issuer are required flags]",
    );
    expect(problem([`--service-account-signing-key-file=${layout.serviceAccountKey}`])).toBe(
      "kube-apiserver: [service-account-issuer is a required flag, service-account-key-file is a required flag, --service-account-signing-key-file and --service-account-issuer are required flags]",
    );
  });

  it("refuses a bad issuer, a repeated one, and a maximum lifetime out of bounds", () => {
    const keys = [
      `--service-account-signing-key-file=${layout.serviceAccountKey}`,
      `--service-account-key-file=${layout.serviceAccountPublicKey}`,
    ];
    expect(problem([...keys, "--service-account-issuer=http://[::1"])).toMatch(
      /^kube-apiserver: \[service-account-issuer "http:\/\/\[::1" contained a ':' but was not a valid URL: /,
    );
    expect(problem([...keys, "--service-account-issuer=a", "--service-account-issuer=a"])).toBe(
      'kube-apiserver: [service-account-issuer "a" is already specified]',
    );
    expect(
      problem([...keys, "--service-account-issuer=a", "--service-account-max-token-expiration=30m"]),
    ).toBe(
      "kube-apiserver: [the service-account-max-token-expiration must be between 1 hour and 2^32 seconds]",
    );
  });

  it("refuses key files that hold no key", async () => {
    const junk = join(dir, "junk.pem");
    await writeFile(junk, "not a key\n");
    expect(
      problem([
        `--service-account-signing-key-file=${layout.serviceAccountKey}`,
        `--service-account-key-file=${junk}`,
        "--service-account-issuer=a",
      ]),
    ).toBe(
      `kube-apiserver: [failed to parse key file "${junk}": data does not contain any valid RSA or ECDSA public keys]`,
    );
    expect(
      problem([
        `--service-account-signing-key-file=${layout.serviceAccountPublicKey}`,
        `--service-account-key-file=${layout.serviceAccountPublicKey}`,
        "--service-account-issuer=a",
      ]),
    ).toBe(
      "kube-apiserver: [failed to parse service-account-issuer-key-file: data does not contain a valid RSA or ECDSA private key]",
    );
  });

  it("started with them, the command answers a TokenRequest signed with sa.key", async () => {
    const entry = fileURLToPath(new URL("./kube-apiserver.ts", import.meta.url));
    const p = startCommand(entry, [
      "--insecure-port=0",
      `--service-account-signing-key-file=${layout.serviceAccountKey}`,
      `--service-account-key-file=${layout.serviceAccountPublicKey}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    ]);
    try {
      await waitFor(() => p.stderr().includes("Serving insecurely on"), "the ready line");
      const url = `http://${/Serving insecurely on (\S+)/.exec(p.stderr())?.[1]}`;
      const post = (path: string, body: unknown) =>
        fetch(`${url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      await post("/api/v1/namespaces/default/serviceaccounts", {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "default" },
      });
      const res = await post("/api/v1/namespaces/default/serviceaccounts/default/token", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: {},
      });
      expect(res.status).toBe(201);
      const token: string = (await res.json()).status.token;
      expect(JSON.parse(Buffer.from(token.split(".")[0], "base64url").toString()).alg).toBe("ES256");
      p.child.kill("SIGTERM");
      expect(await p.waitForExit()).toBe(0);
    } finally {
      p.child.kill("SIGKILL");
    }
  });
});
