import "reflect-metadata";
import type { X509Certificate } from "node:crypto";
import { mkdtemp, readFile, rm, unlink } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseCertificateBundle } from "./authn/x509.ts";
import { startAPIServer } from "./server.ts";
import { generateSelfSignedCertKey, maxHeaderBytes, ServingConfigError, servingCertKey } from "./serving.ts";

describe("the serving certificate", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "serving-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("self-signed: a leaf for the bind address and kube-apiserver's names, then the CA that signed it", async () => {
    const { cert } = await generateSelfSignedCertKey("127.0.0.1");
    const [leaf, ca] = parseCertificateBundle(cert) as [X509Certificate, X509Certificate];
    expect(leaf.checkIP("127.0.0.1")).toBe("127.0.0.1");
    expect(leaf.checkHost("kubernetes.default.svc")).toBe("kubernetes.default.svc");
    expect(leaf.checkIssued(ca) && leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.subject).toMatch(/^CN=127\.0\.0\.1@\d+$/);
    expect(ca.subject).toMatch(/^CN=127\.0\.0\.1-ca@\d+$/);
    // Bound to every address, the names are localhost's.
    const [any] = parseCertificateBundle((await generateSelfSignedCertKey("0.0.0.0")).cert) as [
      X509Certificate,
    ];
    expect(any.checkHost("localhost")).toBe("localhost");
  });

  it("made once in --cert-dir as apiserver.crt/.key, then reused as it is", async () => {
    const first = await servingCertKey({ certDir: join(dir, "certs") });
    expect(first.origin).toBe(
      `Generated self-signed cert (${join(dir, "certs", "apiserver.crt")}, ${join(dir, "certs", "apiserver.key")})`,
    );
    const second = await servingCertKey({ certDir: join(dir, "certs") });
    expect(second.cert).toBe(first.cert);
    expect(second.key).toBe(first.key);
    expect(await readFile(join(dir, "certs", "apiserver.crt"), "utf8")).toBe(first.cert);
    expect((await servingCertKey({})).origin).toBe("Generated self-signed cert in-memory");
  });

  it("refuses half a pair", async () => {
    await servingCertKey({ certDir: dir });
    await unlink(join(dir, "apiserver.key"));
    await expect(servingCertKey({ certDir: dir })).rejects.toThrow(/must be supplied as a pair/);
    await expect(servingCertKey({ tlsCertFile: join(dir, "apiserver.crt") })).rejects.toThrow(
      ServingConfigError,
    );
  });
});

describe("startAPIServer's listeners", () => {
  it("serves plain HTTP alone when no secure port is asked for (chapters 1–2)", async () => {
    const server = await startAPIServer({ insecurePort: 0 });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(server.secureURL).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it("serves both at once: HTTPS authenticates, the insecure port is the superuser's", async () => {
    const server = await startAPIServer({
      insecurePort: 0,
      securePort: 0,
      authentication: { anonymousAuth: false },
    });
    try {
      expect(server.url).toBe(server.secureURL);
      const insecure = await fetch(`${server.insecureURL}/api/v1/namespaces`);
      expect(insecure.status).toBe(200);
      // Nothing configured and anonymous off: every HTTPS request is a 401.
      const status = await new Promise<number>((resolve, reject) => {
        request(`${server.secureURL}/api/v1/namespaces`, { ca: server.servingCert }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on("error", reject)
          .end();
      });
      expect(status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it("reads request heads up to upstream's 1 MiB: a 40 KiB bearer token is a 401 Status, not a dropped 431", async () => {
    // No authenticator and anonymous off: whatever the token, the authentication filter answers
    // 401 — if the request reaches it. The header's size is the point: Node's default stops at 16 KiB.
    const server = await startAPIServer({ securePort: 0, authentication: { anonymousAuth: false } });
    const get = (token: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const headers = { authorization: `Bearer ${token}` };
        request(`${server.secureURL}/api/v1/namespaces`, { ca: server.servingCert, headers }, (res) => {
          let body = "";
          res.on("data", (d) => {
            body += d;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        })
          .on("error", reject)
          .end();
      });
    try {
      const long = await get("t".repeat(40 * 1024));
      expect(long.status).toBe(401);
      expect(JSON.parse(long.body)).toMatchObject({ kind: "Status", apiVersion: "v1", code: 401 });
      // Past the limit, Node answers as Go's server does: 431, no handler involved.
      expect((await get("t".repeat(maxHeaderBytes + 1))).status).toBe(431);
    } finally {
      await server.close();
    }
  });
});
