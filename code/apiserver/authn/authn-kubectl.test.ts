import "reflect-metadata";
import type { KeyObject, X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { ensurePKI, type PKILayout } from "../../pki/certs.ts";
import { PKIError } from "../../pki/errors.ts";
import {
  type CertAndKey,
  encodeCertPEM,
  encodePrivateKeyPEM,
  newCertificateAuthority,
  newPrivateKey,
  newSignedCert,
  parseCertPEM,
  parsePrivateKeyPEM,
} from "../../pki/pki-helpers.ts";
import { type APIServer, startAPIServer } from "../server.ts";
import { runKubectl } from "../testing/kubectl-env.ts";

// The secured API server driven by the real kubectl, with certificates from the course's PKI.
describeWithTools("kubectl against the secure port: who is who, and who gets 401", ["kubectl"], () => {
  let dir: string;
  let layout: PKILayout;
  let server: APIServer; // anonymous on
  let strict: APIServer; // --anonymous-auth=false
  let ca: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "authn-kubectl-"));
    const pki = await ensurePKI({ dir, nodes: ["node-1"] });
    if (pki instanceof PKIError) throw pki;
    layout = pki.layout;
    ca = await readFile(layout.caCert, "utf8");
    await writeFile(join(dir, "tokens.csv"), 's3cret-token,jane,1001,"dev,ops"\n');
    await writeFile(join(dir, "empty.kubeconfig"), "apiVersion: v1\nkind: Config\n");

    // An expired certificate from the right CA, and a valid one from another CA.
    const signer: CertAndKey = {
      cert: parseCertPEM(ca) as X509Certificate,
      key: parsePrivateKeyPEM(await readFile(layout.caKey, "utf8")) as KeyObject,
    };
    const jane = {
      commonName: "jane",
      organization: [],
      altNames: { dnsNames: [], ips: [] },
      usages: ["clientAuth" as const],
    };
    const longAgo = new Date(Date.now() - 3 * 365 * 86400_000);
    const write = async (name: string, by: CertAndKey, at: Date) => {
      const key = await newPrivateKey("ECDSA-P256");
      await writeFile(join(dir, `${name}.crt`), encodeCertPEM(await newSignedCert(jane, key, by, at)));
      await writeFile(join(dir, `${name}.key`), encodePrivateKeyPEM(key));
    };
    await write("expired", signer, longAgo);
    await write("foreign", await newCertificateAuthority("kubernetes", "ECDSA-P256", new Date()), new Date());

    const common = {
      securePort: 0,
      secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
    };
    const authentication = { clientCAFile: layout.caCert, tokenAuthFile: join(dir, "tokens.csv") };
    server = await startAPIServer({ ...common, authentication });
    strict = await startAPIServer({ ...common, authentication: { ...authentication, anonymousAuth: false } });
  });
  afterAll(async () => {
    await server?.close();
    await strict?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubeconfig = (id: string) => join(dir, `${id}.kubeconfig`);

  /** kubectl against `on`, with a kubeconfig and extra flags; never rejects. */
  const kubectl = (on: APIServer, config: string, args: string[]) =>
    runKubectl(
      { ...process.env, HOME: dir, KUBECACHEDIR: join(dir, "cache") },
      [`--kubeconfig=${config}`, `--server=${on.secureURL}`, ...args],
      "", // stdin closed at once: nothing to read, no prompt to wait at
    );
  /** Flags for a client with no kubeconfig credential: it trusts the CA, and that is all. */
  const bare = (...args: string[]) => [`--certificate-authority=${layout.caCert}`, ...args];
  /**
   * No credential the server knows. kubectl with no credential at all prompts for a password on
   * a terminal, so it gets a basic-auth pair instead: no authenticator reads `Authorization:
   * Basic` (upstream removed basic auth in 1.19), so the request presents no credential.
   */
  const none = (...args: string[]) => bare("--username=nobody", "--password=none", ...args);
  /**
   * kubectl's words for a 401: "(Unauthorized)" from a request it decodes the Status of, or
   * client-go's generic 401 text from discovery (logged first, by memcache.go) — what the real
   * kube-apiserver gets too when kubectl has no discovery cache yet.
   */
  const isUnauthorized = (stderr: string) =>
    /^error: You must be logged in to the server \((Unauthorized|the server has asked for the client to provide credentials)\)$/.test(
      stderr.trim().split("\n").at(-1) ?? "",
    );

  it("the admin certificate works, and whoami names its user and groups (with system:authenticated)", async () => {
    const get = await kubectl(server, kubeconfig("admin"), ["get", "namespaces", "-o", "name"]);
    expect(get.err).toBe("");
    expect(get.out).toContain("namespace/kube-system");
    const who = await kubectl(server, kubeconfig("admin"), ["auth", "whoami", "-o", "json"]);
    expect(who.code).toBe(0);
    const review = JSON.parse(who.out);
    expect(review).toMatchObject({ kind: "SelfSubjectReview", apiVersion: "authentication.k8s.io/v1" });
    expect(review.status.userInfo.username).toBe("kubernetes-admin");
    expect(review.status.userInfo.groups).toEqual(["system:masters", "system:authenticated"]);
    expect(review.status.userInfo.extra["authentication.kubernetes.io/credential-id"][0]).toMatch(
      /^X509SHA256=/,
    );
  });

  it("prints whoami's table as kubectl does", async () => {
    const who = await kubectl(server, kubeconfig("node-node-1"), ["auth", "whoami"]);
    expect(who.err).toBe("");
    const rows = who.out
      .trim()
      .split("\n")
      .map((l) => l.split(/\s{2,}/));
    expect(rows[0]).toEqual(["ATTRIBUTE", "VALUE"]);
    expect(rows).toContainEqual(["Username", "system:node:node-1"]);
    expect(rows).toContainEqual(["Groups", "[system:nodes system:authenticated]"]);
  });

  it("a token from the token file works: the user, uid and groups of its line", async () => {
    const who = await kubectl(
      server,
      join(dir, "empty.kubeconfig"),
      bare("--token=s3cret-token", "auth", "whoami", "-o", "json"),
    );
    expect(who.err).toBe("");
    expect(JSON.parse(who.out).status.userInfo).toEqual({
      username: "jane",
      uid: "1001",
      groups: ["dev", "ops", "system:authenticated"],
    });
  });

  it("no credential is system:anonymous — and 401 with --anonymous-auth=false", async () => {
    const who = await kubectl(server, join(dir, "empty.kubeconfig"), none("auth", "whoami", "-o", "json"));
    expect(who.err).toBe("");
    expect(JSON.parse(who.out).status.userInfo).toEqual({
      username: "system:anonymous",
      groups: ["system:unauthenticated"],
    });
    const refused = await kubectl(strict, join(dir, "empty.kubeconfig"), none("get", "namespaces"));
    expect(refused.code).toBe(1);
    expect(isUnauthorized(refused.err), refused.err).toBe(true);
  });

  it("a bad token is 401 even with anonymous on, and the answer gives no hint", async () => {
    for (const token of ["wrong", "s3cret", "S3CRET-TOKEN", "s3cret-token-and-more"]) {
      const r = await kubectl(
        server,
        join(dir, "empty.kubeconfig"),
        bare(`--token=${token}`, "get", "namespaces"),
      );
      expect(isUnauthorized(r.err), `${token}: ${r.err}`).toBe(true);
    }
    const res = await raw(server, { authorization: "Bearer wrong" });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Unauthorized",
      reason: "Unauthorized",
      code: 401,
    });
  });

  it("an expired certificate of the right CA is 401, even with anonymous on", async () => {
    const flags = [
      `--client-certificate=${join(dir, "expired.crt")}`,
      `--client-key=${join(dir, "expired.key")}`,
    ];
    const r = await kubectl(server, join(dir, "empty.kubeconfig"), bare(...flags, "get", "namespaces"));
    expect(isUnauthorized(r.err), r.err).toBe(true);
  });

  it("a certificate from another CA is 401 — kubectl does not even send it, a client that does is refused", async () => {
    const cert = await readFile(join(dir, "foreign.crt"), "utf8");
    const key = await readFile(join(dir, "foreign.key"), "utf8");
    // A client that sends it anyway (Node's does): the x509 authenticator refuses it, and a bad
    // credential is never anonymous.
    expect((await raw(server, {}, { cert, key })).status).toBe(401);
    // kubectl (Go's TLS) sends a certificate only if the server's advertised CAs issued it, so it
    // sends none: anonymous where that is on, 401 where it is off.
    const flags = [
      `--client-certificate=${join(dir, "foreign.crt")}`,
      `--client-key=${join(dir, "foreign.key")}`,
    ];
    const r = await kubectl(strict, join(dir, "empty.kubeconfig"), bare(...flags, "get", "namespaces"));
    expect(isUnauthorized(r.err), r.err).toBe(true);
  });

  it("the admin certificate over Node's client gets through: the gate is the CA, not the client", async () => {
    const admin = layout.identities.find((i) => i.id === "admin");
    const cert = await readFile(admin?.cert as string, "utf8");
    const key = await readFile(admin?.key as string, "utf8");
    expect((await raw(strict, {}, { cert, key })).status).toBe(200);
  });

  /** One GET of /api/v1/namespaces over HTTPS with Node's client, trusting the cluster CA. */
  function raw(
    on: APIServer,
    headers: Record<string, string>,
    tls: { cert?: string; key?: string } = {},
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${on.secureURL}/api/v1/namespaces`, { ca, headers, ...tls }, (res) => {
        let body = "";
        res.on("data", (d) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
  }
});
