import "reflect-metadata";
import type { X509Certificate } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { beforeAll, describe, expect, it } from "vitest";
import {
  type CertAndKey,
  type CertConfig,
  encodeCertPEM,
  newCertificateAuthority,
  newPrivateKey,
  newSignedCert,
} from "../../pki/pki-helpers.ts";
import { AuthenticationError } from "./authenticator.ts";
import {
  CredentialIDKey,
  parseCertificateBundle,
  verifyClientCertificate,
  X509Authenticator,
} from "./x509.ts";

const now = new Date("2026-06-01T00:00:00Z");
const client = (commonName: string, organization: string[] = []): CertConfig => ({
  commonName,
  organization,
  altNames: { dnsNames: [], ips: [] },
  usages: ["clientAuth"],
});

describe("the x509 authenticator", () => {
  let ca: CertAndKey;
  let other: CertAndKey;
  const sign = async (cfg: CertConfig, by: CertAndKey = ca, at: Date = now) =>
    newSignedCert(cfg, await newPrivateKey("ECDSA-P256"), by, at);

  beforeAll(async () => {
    ca = await newCertificateAuthority("kubernetes", "ECDSA-P256", now);
    other = await newCertificateAuthority("kubernetes", "ECDSA-P256", now); // same name, other key
  });

  it("CN is the user, each O a group, the fingerprint the credential id", async () => {
    const cert = await sign(client("jane", ["dev", "ops"]));
    const resp = new X509Authenticator([ca.cert], () => now).authenticateChain([cert]);
    expect(resp?.user.name).toBe("jane");
    expect(resp?.user.groups).toEqual(["dev", "ops"]);
    expect(resp?.user.extra?.[CredentialIDKey]?.[0]).toMatch(/^X509SHA256=[0-9a-f]{64}$/);
  });

  it("refuses a certificate from another CA, even one with the same name", async () => {
    const cert = await sign(client("jane"), other);
    expect(() => verifyClientCertificate([cert], [ca.cert], now)).toThrow(
      "x509: certificate signed by unknown authority",
    );
  });

  it("refuses an expired certificate, and one not yet valid", async () => {
    const cert = await sign(client("jane"));
    const twoYears = new Date(now.getTime() + 2 * 365 * 86400_000);
    expect(() => verifyClientCertificate([cert], [ca.cert], twoYears)).toThrow(
      /has expired or is not yet valid/,
    );
    const yesterday = new Date(now.getTime() - 86400_000);
    expect(() => verifyClientCertificate([cert], [ca.cert], yesterday)).toThrow(AuthenticationError);
  });

  it("refuses a serving-only certificate", async () => {
    const cert = await sign({ ...client("kube-apiserver"), usages: ["serverAuth"] });
    expect(() => verifyClientCertificate([cert], [ca.cert], now)).toThrow(/incompatible key usage/);
  });

  it("takes what else the client sends only as links towards a trusted root", async () => {
    // A client sending its own CA along does not make that CA trusted.
    const leaf = await sign(client("jane"), other);
    expect(() => verifyClientCertificate([leaf, other.cert], [ca.cert], now)).toThrow(/unknown authority/);
    expect(verifyClientCertificate([leaf, other.cert], [ca.cert, other.cert], now)).toHaveLength(2);
  });

  it("is not mine without a certificate, or without a CN", async () => {
    const noTLS = { headers: {}, socket: {} } as unknown as IncomingMessage;
    expect(await new X509Authenticator([ca.cert]).authenticateRequest(noTLS)).toBeNull();
    const noCN = await sign(client(""));
    expect(new X509Authenticator([ca.cert], () => now).authenticateChain([noCN])).toBeNull();
  });

  it("decides once per connection, but still refuses the connection once its certificate expired", async () => {
    const cert = await sign(client("jane", ["dev"]));
    let reads = 0;
    const connection = () => {
      const peer = { raw: cert.raw, fingerprint256: cert.fingerprint256, issuerCertificate: undefined };
      const socket = {
        getPeerCertificate: () => {
          reads++;
          return peer;
        },
      };
      return { headers: {}, socket } as unknown as IncomingMessage;
    };
    let at = now;
    const authn = new X509Authenticator([ca.cert], () => at);
    const [first, second] = [connection(), connection()];
    expect((await authn.authenticateRequest(first))?.user.name).toBe("jane");
    expect((await authn.authenticateRequest(first))?.user.groups).toEqual(["dev"]);
    expect(reads).toBe(1); // the keep-alive connection's second request: no parsing, no signature check
    expect((await authn.authenticateRequest(second))?.user.name).toBe("jane");
    expect(reads).toBe(2); // another connection is decided on its own
    at = new Date(now.getTime() + 2 * 365 * 86400_000); // the connection outlived its certificate
    await expect(authn.authenticateRequest(first)).rejects.toThrow(/has expired or is not yet valid/);
  });

  it("reads every CA of a bundle", async () => {
    const bundle = encodeCertPEM(ca.cert) + encodeCertPEM(other.cert);
    expect(parseCertificateBundle(bundle).map((c: X509Certificate) => c.fingerprint256)).toEqual([
      ca.cert.fingerprint256,
      other.cert.fingerprint256,
    ]);
  });
});
