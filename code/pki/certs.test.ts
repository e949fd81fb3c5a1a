import "reflect-metadata";
import { execFile } from "node:child_process";
import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, unlink, writeFile } from "node:fs/promises";
import { createServer, request } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { promisify } from "node:util";
import * as x509 from "@peculiar/x509";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { apiServerCertSpec } from "./certlist.ts";
import { type EnsurePKIOptions, type EnsurePKIResult, ensurePKI } from "./certs.ts";
import { PKIError } from "./errors.ts";
import { encodeCertPEM, newSignedCert } from "./pki-helpers.ts";

const day = 24 * 60 * 60 * 1000;
const identities = [
  { id: "admin", subject: "O=system:masters\nCN=kubernetes-admin", user: "kubernetes-admin" },
  { id: "kube-scheduler", subject: "CN=system:kube-scheduler", user: "system:kube-scheduler" },
  {
    id: "kube-controller-manager",
    subject: "CN=system:kube-controller-manager",
    user: "system:kube-controller-manager",
  },
  { id: "node-node-1", subject: "O=system:nodes\nCN=system:node:node-1", user: "system:node:node-1" },
];
const layout = [
  "ca.crt",
  "ca.key",
  "apiserver.crt",
  "apiserver.key",
  "apiserver-kubelet-client.crt",
  "apiserver-kubelet-client.key",
  "sa.key",
  "sa.pub",
  ...identities.flatMap(({ id }) => [`${id}.crt`, `${id}.key`, `${id}.kubeconfig`]),
].sort();

let base: string;
/** The default PKI (RSA 2048), made once at real time so the TLS handshake accepts it. */
let fixture: string;
let fixtureResult: EnsurePKIResult;
let fixtureProgress: string[];
/** A second, unrelated PKI (ECDSA, fast), for certificates from another CA. */
let other: string;
let copies = 0;

async function ok(options: EnsurePKIOptions): Promise<EnsurePKIResult> {
  const result = await ensurePKI(options);
  if (result instanceof PKIError) throw result;
  return result;
}

async function fail(options: EnsurePKIOptions): Promise<PKIError> {
  const result = await ensurePKI(options);
  if (!(result instanceof PKIError))
    throw new Error(`expected a PKIError, got ${JSON.stringify(result.written)}`);
  return result;
}

/** A copy of the fixture directory to change. */
async function copyOfFixture(): Promise<string> {
  const dir = join(base, `copy-${++copies}`);
  await cp(fixture, dir, { recursive: true });
  return dir;
}

async function snapshot(dir: string): Promise<Map<string, { bytes: Buffer; mtimeMs: number; ino: number }>> {
  const files = new Map<string, { bytes: Buffer; mtimeMs: number; ino: number }>();
  for (const name of (await readdir(dir)).sort()) {
    const s = await stat(join(dir, name));
    files.set(name, { bytes: await readFile(join(dir, name)), mtimeMs: s.mtimeMs, ino: s.ino });
  }
  return files;
}

const cert = async (dir: string, name: string) => new X509Certificate(await readFile(join(dir, name)));
const key = async (dir: string, name: string) => createPrivateKey(await readFile(join(dir, name)));
const text = (dir: string, name: string) => readFile(join(dir, name), "utf8");

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "pki-test-"));
  fixture = join(base, "fixture");
  fixtureProgress = [];
  fixtureResult = await ok({ dir: fixture, onProgress: (line) => fixtureProgress.push(line) });
  other = join(base, "other");
  await ok({ dir: other, encryptionAlgorithm: "ECDSA-P256" });
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("a first run", () => {
  it("writes the fixed layout: keys and kubeconfigs (which embed a key) 0600, the rest 0644", async () => {
    expect((await readdir(fixture)).sort()).toEqual(layout);
    expect([...fixtureResult.written].sort()).toEqual(layout);
    expect(fixtureResult.kept).toEqual([]);
    for (const name of layout) {
      const mode = (await stat(join(fixture, name))).mode & 0o777;
      expect(mode, name).toBe(/\.(key|kubeconfig)$/.test(name) ? 0o600 : 0o644);
    }
    expect(fixtureResult.layout.caCert).toBe(join(fixture, "ca.crt"));
    expect(fixtureResult.layout.identities.map((i) => [i.id, i.user, i.groups])).toEqual([
      ["admin", "kubernetes-admin", ["system:masters"]],
      ["kube-scheduler", "system:kube-scheduler", []],
      ["kube-controller-manager", "system:kube-controller-manager", []],
      ["node-node-1", "system:node:node-1", ["system:nodes"]],
    ]);
  });

  it("reports each file decision in kubeadm's words", () => {
    expect(fixtureProgress).toEqual([
      `[certs] Generating "ca" certificate and key`,
      `[certs] Generating "apiserver" certificate and key`,
      "[certs] apiserver serving cert is signed for DNS names [kubernetes kubernetes.default kubernetes.default.svc kubernetes.default.svc.cluster.local localhost] and IPs [127.0.0.1 ::1]",
      `[certs] Generating "apiserver-kubelet-client" certificate and key`,
      ...identities.map(({ id }) => `[certs] Generating "${id}" certificate and key`),
      `[certs] Generating "sa" key and public key`,
      ...identities.map(({ id }) => `[kubeconfig] Writing "${id}.kubeconfig" kubeconfig file`),
    ]);
  });

  it("makes a self-signed CA, CN kubernetes, RSA 2048, valid 10 years from 5 minutes ago", async () => {
    const ca = await cert(fixture, "ca.crt");
    expect(ca.subject).toBe("CN=kubernetes");
    expect(ca.issuer).toBe("CN=kubernetes");
    expect(ca.ca).toBe(true);
    expect(ca.subjectAltName).toBe("DNS:kubernetes");
    expect(ca.verify(ca.publicKey)).toBe(true);
    expect(ca.checkPrivateKey(await key(fixture, "ca.key"))).toBe(true);
    expect(ca.publicKey.asymmetricKeyType).toBe("rsa");
    expect(ca.publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const from = new Date(ca.validFrom).getTime();
    expect(new Date(ca.validTo).getTime() - from).toBe(3650 * day);
    expect(Math.abs(Date.now() - 5 * 60_000 - from)).toBeLessThan(2 * 60_000);
    const usages = new x509.X509Certificate(ca.raw).getExtension(x509.KeyUsagesExtension);
    expect(usages?.usages).toBe(
      x509.KeyUsageFlags.digitalSignature |
        x509.KeyUsageFlags.keyEncipherment |
        x509.KeyUsageFlags.keyCertSign,
    );
    expect(usages?.critical).toBe(true);
    expect((await text(fixture, "ca.key")).startsWith("-----BEGIN RSA PRIVATE KEY-----\n")).toBe(true);
  });

  it("makes the API server's serving certificate for loopback and the kubernetes Service names", async () => {
    const ca = await cert(fixture, "ca.crt");
    const server = await cert(fixture, "apiserver.crt");
    expect(server.subject).toBe("CN=kube-apiserver");
    expect(server.issuer).toBe("CN=kubernetes");
    expect(server.subjectAltName?.split(", ").sort()).toEqual(
      [
        "DNS:kubernetes",
        "DNS:kubernetes.default",
        "DNS:kubernetes.default.svc",
        "DNS:kubernetes.default.svc.cluster.local",
        "DNS:localhost",
        "IP Address:127.0.0.1",
        "IP Address:0:0:0:0:0:0:0:1",
      ].sort(),
    );
    expect(server.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]); // Node lists the extended key usages: serverAuth
    expect(server.ca).toBe(false);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.checkPrivateKey(await key(fixture, "apiserver.key"))).toBe(true);
  });

  it.each(identities)(
    "makes the $id client certificate: its user and groups, clientAuth, 1 year",
    async ({ id, subject }) => {
      const ca = await cert(fixture, "ca.crt");
      const client = await cert(fixture, `${id}.crt`);
      expect(client.subject).toBe(subject);
      expect(client.issuer).toBe("CN=kubernetes");
      expect(client.subjectAltName).toBeUndefined();
      expect(client.keyUsage).toEqual(["1.3.6.1.5.5.7.3.2"]); // clientAuth
      expect(client.ca).toBe(false);
      expect(client.verify(ca.publicKey)).toBe(true);
      expect(client.verify(client.publicKey)).toBe(false);
      expect(client.checkPrivateKey(await key(fixture, `${id}.key`))).toBe(true);
      expect(client.checkPrivateKey(await key(fixture, "ca.key"))).toBe(false);
      expect(new Date(client.validTo).getTime() - new Date(client.validFrom).getTime()).toBe(365 * day);
      const parsed = new x509.X509Certificate(client.raw);
      expect(parsed.getExtension(x509.KeyUsagesExtension)?.usages).toBe(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      );
      expect(parsed.getExtension(x509.BasicConstraintsExtension)?.ca).toBe(false);
      // Go's CreateCertificate links the certificate to its CA's key by the key identifier.
      expect(parsed.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId).toBe(
        new x509.X509Certificate(ca.raw).getExtension(x509.SubjectKeyIdentifierExtension)?.keyId,
      );
    },
  );

  it("draws every serial number at random, positive and below 2^63", async () => {
    const serials = await Promise.all(
      layout
        .filter((n) => n.endsWith(".crt"))
        .map(async (n) => BigInt(`0x${(await cert(fixture, n)).serialNumber}`)),
    );
    expect(new Set(serials).size).toBe(serials.length);
    for (const s of serials) {
      expect(s > 0n && s < 2n ** 63n - 1n).toBe(true);
    }
    // 63 random bits: the chance that all six fall below 2^55 is 2^-48.
    expect(serials.some((s) => s >= 2n ** 55n)).toBe(true);
  });

  it("writes the service-account key pair as PEM: an RSA private key and its PKIX public key", async () => {
    const saKey = await text(fixture, "sa.key");
    const saPub = await text(fixture, "sa.pub");
    expect(saKey.startsWith("-----BEGIN RSA PRIVATE KEY-----\n")).toBe(true);
    expect(saPub.startsWith("-----BEGIN PUBLIC KEY-----\n")).toBe(true);
    const derived = createPublicKey(createPrivateKey(saKey)).export({ type: "spki", format: "der" });
    expect(createPublicKey(saPub).export({ type: "spki", format: "der" }).equals(derived)).toBe(true);
  });

  it.each(identities)(
    "writes a kubeconfig for $id that carries exactly the files beside it",
    async ({ id, user }) => {
      const config = parse(await text(fixture, `${id}.kubeconfig`));
      const context = `${user}@kubernetes`;
      expect(config).toMatchObject({
        apiVersion: "v1",
        kind: "Config",
        "current-context": context,
        contexts: [{ name: context, context: { cluster: "kubernetes", user } }],
        clusters: [{ name: "kubernetes", cluster: { server: "https://127.0.0.1:6443" } }],
        users: [{ name: user }],
        preferences: {},
      });
      const decode = (data: string) => Buffer.from(data, "base64").toString();
      expect(decode(config.clusters[0].cluster["certificate-authority-data"])).toBe(
        await text(fixture, "ca.crt"),
      );
      expect(decode(config.users[0].user["client-certificate-data"])).toBe(await text(fixture, `${id}.crt`));
      expect(decode(config.users[0].user["client-key-data"])).toBe(await text(fixture, `${id}.key`));
    },
  );
});

/** Serves HTTPS with apiserver.crt, asks for a client certificate signed by `caDir`'s CA, answers the peer's subject. */
async function withServer<T>(caDir: string, use: (port: number) => Promise<T>): Promise<T> {
  const server = createServer(
    {
      cert: await text(fixture, "apiserver.crt"),
      key: await text(fixture, "apiserver.key"),
      ca: await text(caDir, "ca.crt"),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.end(JSON.stringify({ O: peer.subject.O, CN: peer.subject.CN }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    return await use((server.address() as AddressInfo).port);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe("a TLS handshake with the generated files", () => {
  async function handshake(client: { dir: string; id: string }, caDir: string, servername?: string) {
    const [ca, cert, key] = await Promise.all([
      text(fixture, "ca.crt"),
      text(client.dir, `${client.id}.crt`),
      text(client.dir, `${client.id}.key`),
    ]);
    return withServer(
      caDir,
      (port) =>
        new Promise<{ body: string; serverCN: string }>((resolve, reject) => {
          const req = request(
            { host: "127.0.0.1", port, path: "/", servername, ca, cert, key, agent: false },
            (res) => {
              const serverCN = String((res.socket as TLSSocket).getPeerCertificate().subject.CN);
              let body = "";
              res.on("data", (chunk) => {
                body += chunk;
              });
              res.on("end", () => resolve({ body, serverCN }));
            },
          );
          req.on("error", reject);
          req.end();
        }),
    );
  }

  it("lets admin in as O=system:masters, and the client accepts the server as 127.0.0.1", async () => {
    const { body, serverCN } = await handshake({ dir: fixture, id: "admin" }, fixture);
    expect(JSON.parse(body)).toEqual({ O: "system:masters", CN: "kubernetes-admin" });
    expect(serverCN).toBe("kube-apiserver");
  });

  it("lets a kubelet in as system:node:node-1 in system:nodes, reaching the server as kubernetes.default.svc", async () => {
    const { body } = await handshake({ dir: fixture, id: "node-node-1" }, fixture, "kubernetes.default.svc");
    expect(JSON.parse(body)).toEqual({ O: "system:nodes", CN: "system:node:node-1" });
  });

  it("fails when the server trusts another CA, and when the name dialled is not a SAN", async () => {
    await expect(handshake({ dir: fixture, id: "admin" }, other)).rejects.toThrow();
    await expect(handshake({ dir: fixture, id: "admin" }, fixture, "example.com")).rejects.toThrow(
      /altnames|Hostname\/IP does not match/,
    );
  });
});

// Go's crypto/x509 and crypto/tls are stricter than OpenSSL in places; the real kubectl is the
// client our kubeconfigs are for.
describeWithTools("the real kubectl with a generated kubeconfig", ["kubectl"], (tools) => {
  it.each(identities)("authenticates as $user", async ({ id, user }) => {
    const body = await withServer(fixture, async (port) => {
      const out = await promisify(execFile)(tools.kubectl.path!, [
        "--kubeconfig",
        join(fixture, `${id}.kubeconfig`),
        "--server",
        `https://127.0.0.1:${port}`,
        "get",
        "--raw",
        "/",
      ]);
      return out.stdout;
    });
    expect(JSON.parse(body).CN).toBe(user);
  });
});

describe("a re-run", () => {
  it("keeps every file byte for byte and does not rewrite any", async () => {
    const dir = await copyOfFixture();
    const before = await snapshot(dir);
    const progress: string[] = [];
    const result = await ok({ dir, onProgress: (line) => progress.push(line) });
    expect(result.written).toEqual([]);
    expect([...result.kept].sort()).toEqual(layout);
    expect(await snapshot(dir)).toEqual(before);
    expect(progress).toContain(`[certs] Using the existing "ca" certificate and key`);
    expect(progress).toContain(`[certs] Using the existing "sa" key`);
    expect(progress).toContain(
      `[kubeconfig] Using existing kubeconfig file: "${join(dir, "admin.kubeconfig")}"`,
    );
  });

  it("with force makes every key and certificate again, under a new CA", async () => {
    const dir = await copyOfFixture();
    const before = await snapshot(dir);
    // ECDSA keeps the test fast; what matters is that nothing of the old PKI survives.
    const result = await ok({ dir, force: true, encryptionAlgorithm: "ECDSA-P256" });
    expect([...result.written].sort()).toEqual(layout);
    const after = await snapshot(dir);
    for (const name of layout)
      expect(after.get(name)!.bytes.equals(before.get(name)!.bytes), name).toBe(false);
    const ca = await cert(dir, "ca.crt");
    expect((await cert(dir, "admin.crt")).verify(ca.publicKey)).toBe(true);
    expect((await cert(dir, "admin.crt")).verify((await cert(fixture, "ca.crt")).publicKey)).toBe(false);
  });

  it("completes a partial directory: the missing files are made, signed by the CA that is there", async () => {
    const dir = await copyOfFixture();
    const before = await snapshot(dir);
    const gone = [
      "apiserver.crt",
      "sa.pub",
      "node-node-1.crt",
      "node-node-1.key",
      "node-node-1.kubeconfig",
      "admin.kubeconfig",
    ];
    for (const name of gone) await unlink(join(dir, name));
    const result = await ok({ dir });
    expect([...result.written].sort()).toEqual([...gone].sort());
    const after = await snapshot(dir);
    for (const name of layout.filter((n) => !gone.includes(n))) {
      expect(after.get(name), name).toEqual(before.get(name));
    }
    const ca = await cert(dir, "ca.crt");
    const server = await cert(dir, "apiserver.crt");
    expect(server.verify(ca.publicKey)).toBe(true);
    // The key was there, so the new certificate is for it; sa.pub is derived from the kept sa.key.
    expect(server.checkPrivateKey(await key(dir, "apiserver.key"))).toBe(true);
    expect(after.get("sa.pub")!.bytes.equals(before.get("sa.pub")!.bytes)).toBe(true);
    expect((await cert(dir, "node-node-1.crt")).verify(ca.publicKey)).toBe(true);
    expect(parse(await text(dir, "admin.kubeconfig")).users[0].user["client-certificate-data"]).toBe(
      Buffer.from(await text(dir, "admin.crt")).toString("base64"),
    );
  });

  it("rewrites a kubeconfig whose certificate it had to make again", async () => {
    const dir = await copyOfFixture();
    await unlink(join(dir, "admin.crt"));
    const result = await ok({ dir });
    expect(result.written).toEqual(["admin.crt", "admin.kubeconfig"]);
    const config = parse(await text(dir, "admin.kubeconfig"));
    expect(Buffer.from(config.users[0].user["client-certificate-data"], "base64").toString()).toBe(
      await text(dir, "admin.crt"),
    );
  });

  it("re-issues a CA certificate for a kept ca.key: what it signed still verifies", async () => {
    const dir = await copyOfFixture();
    await unlink(join(dir, "ca.crt"));
    const result = await ok({ dir });
    expect(result.written).toEqual(["ca.crt", ...identities.map(({ id }) => `${id}.kubeconfig`)]);
    const ca = await cert(dir, "ca.crt");
    expect(ca.checkPrivateKey(await key(fixture, "ca.key"))).toBe(true);
    expect((await cert(dir, "apiserver.crt")).verify(ca.publicKey)).toBe(true);
  });

  it("accepts a CA without its key while nothing needs signing, and says so when something does", async () => {
    const dir = await copyOfFixture();
    await unlink(join(dir, "ca.key"));
    const progress: string[] = [];
    const result = await ok({ dir, onProgress: (line) => progress.push(line) });
    expect(result.written).toEqual([]);
    expect(progress[0]).toBe(
      `[certs] Using the existing "ca" certificate (no ca.key: every certificate must exist already)`,
    );
    const error = await fail({ dir, nodes: ["node-1", "node-2"] });
    expect(error.reason).toBe("Missing");
    expect(error.file).toBe(join(dir, "node-node-2.crt"));
    expect(error.message).toContain("ca.key is not in");
  });

  it("adds the identities of new nodes and keeps the old ones", async () => {
    const dir = await copyOfFixture();
    const result = await ok({ dir, nodes: ["node-1", "worker-b"] });
    expect(result.written).toEqual(["node-worker-b.key", "node-worker-b.crt", "node-worker-b.kubeconfig"]);
    expect((await cert(dir, "node-worker-b.crt")).subject).toBe("O=system:nodes\nCN=system:node:worker-b");
  });
});

describe("a file that is there and wrong is an error value, never replaced", () => {
  /** Breaks a copy of the fixture, runs, and checks the directory was left as it was. */
  async function broken(change: (dir: string) => Promise<void>, options: Partial<EnsurePKIOptions> = {}) {
    const dir = await copyOfFixture();
    await change(dir);
    const before = await snapshot(dir);
    const error = await fail({ dir, ...options });
    expect(await snapshot(dir)).toEqual(before);
    expect(error).toBeInstanceOf(PKIError);
    expect(error.message).toContain("--force");
    if (error.file) expect(error.message).toContain(error.file);
    return { dir, error };
  }
  const copy = (from: string, to: string, srcDir?: string) => async (dir: string) =>
    writeFile(join(dir, to), await readFile(join(srcDir ?? dir, from)));

  it("a key that is not its certificate's", async () => {
    const { dir, error } = await broken(copy("kube-scheduler.key", "admin.key"));
    expect(error.reason).toBe("KeyMismatch");
    expect(error.file).toBe(join(dir, "admin.key"));
    expect(error.message).toBe(
      `private key ${join(dir, "admin.key")} does not match the public key of certificate ${join(dir, "admin.crt")}; delete admin.crt and admin.key to have it made again, or re-run with --force to make every key and certificate again`,
    );
  });

  it("a certificate another CA signed", async () => {
    const { dir, error } = await broken(async (dir) => {
      await copy("admin.crt", "admin.crt", other)(dir);
      await copy("admin.key", "admin.key", other)(dir);
    });
    expect(error.reason).toBe("NotSignedByCA");
    expect(error.file).toBe(join(dir, "admin.crt"));
    expect(error.message).toMatch(/^certificate admin is not signed by corresponding CA/);
  });

  it("a certificate that names our CA as issuer but whose signature does not verify", async () => {
    const { error } = await broken(async (dir) => {
      const der = Buffer.from((await cert(dir, "admin.crt")).raw);
      der[der.length - 1] ^= 0xff; // the last byte of the signature value
      const forged = new X509Certificate(der);
      expect(forged.checkIssued(await cert(dir, "ca.crt"))).toBe(true); // the names and key ids still match
      await writeFile(join(dir, "admin.crt"), encodeCertPEM(forged));
    });
    expect(error.reason).toBe("NotSignedByCA");
  });

  it("a certificate for another identity (subject)", async () => {
    const { error } = await broken(async (dir) => {
      await copy("admin.crt", "kube-scheduler.crt")(dir);
      await copy("admin.key", "kube-scheduler.key")(dir);
    });
    expect(error.reason).toBe("Mismatch");
    expect(error.message).toMatch(
      /^certificate kube-scheduler is invalid: its subject is "O=system:masters, CN=kubernetes-admin", not "CN=system:kube-scheduler"/,
    );
  });

  it("a serving certificate without a SAN that is asked for", async () => {
    const { error } = await broken(async (dir) => {
      const spec = apiServerCertSpec();
      const narrow = { ...spec, altNames: { dnsNames: ["kubernetes"], ips: ["127.0.0.1"] } };
      const ca = { cert: await cert(dir, "ca.crt"), key: await key(dir, "ca.key") };
      const server = await newSignedCert(narrow, await key(dir, "apiserver.key"), ca, new Date());
      await writeFile(join(dir, "apiserver.crt"), encodeCertPEM(server));
    });
    expect(error.reason).toBe("Mismatch");
    expect(error.message).toMatch(
      /^certificate apiserver is invalid: it is not valid for the DNS name kubernetes.default /,
    );
  });

  it("a certificate without its key", async () => {
    const { dir, error } = await broken((dir) => unlink(join(dir, "admin.key")));
    expect(error.reason).toBe("Missing");
    expect(error.file).toBe(join(dir, "admin.key"));
  });

  it("a ca.crt that is not a CA, and one that is not a certificate", async () => {
    const notCA = await broken(async (dir) => {
      await copy("admin.crt", "ca.crt")(dir);
      await copy("admin.key", "ca.key")(dir);
    });
    expect(notCA.error.reason).toBe("Mismatch");
    expect(notCA.error.message).toMatch(/^certificate ca is not a CA/);
    const garbage = await broken((dir) => writeFile(join(dir, "ca.crt"), "not a certificate\n"));
    expect(garbage.error.reason).toBe("Unreadable");
    expect(garbage.error.file).toBe(join(garbage.dir, "ca.crt"));
  });

  it("an sa.pub that is not sa.key's", async () => {
    const { dir, error } = await broken(copy("sa.pub", "sa.pub", other));
    expect(error.reason).toBe("KeyMismatch");
    expect(error.file).toBe(join(dir, "sa.pub"));
  });

  it("a kubeconfig with another server or another CA", async () => {
    const server = await broken(async (dir) => {
      const path = join(dir, "admin.kubeconfig");
      await writeFile(
        path,
        (await readFile(path, "utf8")).replace("https://127.0.0.1:6443", "https://10.0.0.1:6443"),
      );
    });
    expect(server.error.reason).toBe("Mismatch");
    expect(server.error.message).toMatch(
      /has an unexpected API Server URL: expected: https:\/\/127\.0\.0\.1:6443, got: https:\/\/10\.0\.0\.1:6443/,
    );
    const wrongCA = await broken(async (dir) => {
      const path = join(dir, "kube-scheduler.kubeconfig");
      const ours = Buffer.from(await text(dir, "ca.crt")).toString("base64");
      const theirs = Buffer.from(await text(other, "ca.crt")).toString("base64");
      await writeFile(path, (await readFile(path, "utf8")).replace(ours, theirs));
    });
    expect(wrongCA.error.message).toBe(
      `a kubeconfig file "${join(wrongCA.dir, "kube-scheduler.kubeconfig")}" exists already but has got the wrong CA cert; delete kube-scheduler.kubeconfig to have it made again, or re-run with --force to make every key and certificate again`,
    );
  });

  it("a kubeconfig asked to point elsewhere than it does", async () => {
    const { error } = await broken(async () => {}, { server: "https://192.0.2.7:6443" });
    expect(error.reason).toBe("Mismatch");
    expect(error.file).toMatch(/admin\.kubeconfig$/);
  });

  it("a serving certificate asked for an extra SAN it does not hold (kubeadm: certificate apiserver is invalid)", async () => {
    const ip = await broken(async () => {}, { apiServerCertExtraSANs: ["192.0.2.7"] });
    expect(ip.error.reason).toBe("Mismatch");
    expect(ip.error.file).toBe(join(ip.dir, "apiserver.crt"));
    expect(ip.error.message).toBe(
      `certificate apiserver is invalid: it is not valid for the IP address 192.0.2.7 (${join(ip.dir, "apiserver.crt")}); delete apiserver.crt to have it made again, or re-run with --force to make every key and certificate again`,
    );
    const name = await broken(async () => {}, { apiServerCertExtraSANs: ["api.example.com"] });
    expect(name.error.message).toMatch(
      /^certificate apiserver is invalid: it is not valid for the DNS name api\.example\.com /,
    );
  });
});

describe("options", () => {
  it("rejects node names that are not DNS subdomains, twice-given names, and a server that is not https", async () => {
    const dir = join(base, "never-made");
    const bad = await fail({ dir, nodes: ["Node_1"] });
    expect(bad.reason).toBe("InvalidOption");
    expect(bad.message).toMatch(/^invalid node name "Node_1": a lowercase RFC 1123 subdomain/);
    expect((await fail({ dir, nodes: ["a", "a"] })).message).toBe(`node name "a" is given twice`);
    expect((await fail({ dir, server: "http://127.0.0.1:8080" })).reason).toBe("InvalidOption");
    const san = await fail({ dir, apiServerCertExtraSANs: ["10.0.0.1", "Bad_Name"] });
    expect(san.reason).toBe("InvalidOption");
    expect(san.message).toMatch(
      /^invalid extra SAN "Bad_Name": altname is not a valid IP address, DNS label or a DNS label with subdomain wildcards: a lowercase RFC 1123 subdomain .*; a wildcard DNS-1123 subdomain must start with '\*\.'/,
    );
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
  });

  it("splits extra SANs as kubeadm does: an IP is an IP SAN, a name (or *.name) a DNS SAN; the defaults stay once", async () => {
    const dir = join(base, "extra-sans");
    await ok({
      dir,
      encryptionAlgorithm: "ECDSA-P256",
      apiServerCertExtraSANs: [
        "192.0.2.7",
        "2001:db8::7",
        "api.example.com",
        "*.lb.example.com",
        "localhost",
        "127.0.0.1",
      ],
    });
    const server = await cert(dir, "apiserver.crt");
    expect(server.subjectAltName).toBe(
      "DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, DNS:localhost, DNS:api.example.com, DNS:*.lb.example.com, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:192.0.2.7, IP Address:2001:DB8:0:0:0:0:0:7",
    );
    // A re-run asking for the same names keeps the certificate.
    const again = await ok({ dir, apiServerCertExtraSANs: ["api.example.com", "192.0.2.7"] });
    expect(again.kept).toContain("apiserver.crt");
  });

  it("makes ECDSA P-256 keys when asked, for the nodes and the server given, from the time given", async () => {
    const dir = join(base, "ecdsa");
    const now = new Date("2026-03-01T12:00:00Z");
    await ok({
      dir,
      encryptionAlgorithm: "ECDSA-P256",
      nodes: ["a", "b"],
      server: "https://10.1.2.3:7443",
      now,
    });
    expect((await readdir(dir)).filter((n) => n.startsWith("node-")).sort()).toEqual(
      [
        "node-a.crt",
        "node-a.key",
        "node-a.kubeconfig",
        "node-b.crt",
        "node-b.key",
        "node-b.kubeconfig",
      ].sort(),
    );
    expect((await text(dir, "ca.key")).startsWith("-----BEGIN EC PRIVATE KEY-----\n")).toBe(true);
    const ca = await cert(dir, "ca.crt");
    expect(ca.publicKey.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
    expect(new x509.X509Certificate(ca.raw).signatureAlgorithm).toMatchObject({
      name: "ECDSA",
      hash: { name: "SHA-256" },
    });
    expect(new Date(ca.validFrom).toISOString()).toBe("2026-03-01T11:55:00.000Z");
    expect(new Date(ca.validTo).toISOString()).toBe(
      new Date(now.getTime() - 5 * 60_000 + 3650 * day).toISOString(),
    );
    const b = await cert(dir, "node-b.crt");
    expect(b.subject).toBe("O=system:nodes\nCN=system:node:b");
    expect(new Date(b.validTo).toISOString()).toBe(
      new Date(now.getTime() - 5 * 60_000 + 365 * day).toISOString(),
    );
    expect(parse(await text(dir, "node-b.kubeconfig")).clusters[0].cluster.server).toBe(
      "https://10.1.2.3:7443",
    );
  });

  it("builds on a CA key the learner brings: P-384 signs with SHA-384; other curves are refused", async () => {
    const dir = join(base, "own-ca");
    await mkdir(dir);
    const own = generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey;
    await writeFile(join(dir, "ca.key"), own.export({ type: "sec1", format: "pem" }), { mode: 0o600 });
    const result = await ok({ dir, encryptionAlgorithm: "ECDSA-P256" });
    expect(result.kept).toEqual(["ca.key"]);
    const ca = await cert(dir, "ca.crt");
    expect(ca.checkPrivateKey(own)).toBe(true);
    expect(new x509.X509Certificate(ca.raw).signatureAlgorithm).toMatchObject({ hash: { name: "SHA-384" } });
    expect((await cert(dir, "admin.crt")).verify(ca.publicKey)).toBe(true);

    const p521 = join(base, "p521-ca");
    await mkdir(p521);
    const key = generateKeyPairSync("ec", { namedCurve: "P-521" }).privateKey;
    await writeFile(join(p521, "ca.key"), key.export({ type: "sec1", format: "pem" }));
    const error = await fail({ dir: p521 });
    expect(error.reason).toBe("Unreadable");
    expect(error.message).toMatch(
      /^failure loading ca key: is an ECDSA key on curve secp521r1, not P-256 or P-384/,
    );
  });

  it("warns, as kubeadm does, about certificates that have expired, and keeps them", async () => {
    const dir = await copyOfFixture();
    const result = await ok({ dir, now: new Date(Date.now() + 400 * day) });
    expect(result.written).toEqual([]);
    expect(result.warnings).toHaveLength(6); // apiserver, apiserver-kubelet-client and the four clients; the CA has 10 years
    expect(result.warnings[0]).toMatch(
      /^WARNING: could not validate bounds for certificate apiserver: the certificate has expired/,
    );
  });
});
