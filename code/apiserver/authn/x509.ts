/**
 * The x509 authenticator — a client certificate signed by the cluster's client CA is an identity:
 * its subject's CN is the user name, each O a group. Upstream: k8s.io/apiserver
 * pkg/authentication/request/x509/x509.go.
 *
 * Solves: the API server never stores users. Whoever holds a certificate the CA signed, and its
 * private key (the TLS handshake proved that), *is* the name written in it — so issuing an
 * identity is signing a certificate (code/pki/), and no request has to look anything up.
 *
 * Invariants (the three answers of authenticator.ts):
 * - no client certificate on the connection, or no CN in it: `null` — not mine, try the next;
 * - a chain from the certificate to one of `--client-ca-file`'s CAs, every link within its
 *   validity period and the leaf usable for client authentication: the user;
 * - anything else (another CA, expired, not yet valid, a server-only certificate): an
 *   AuthenticationError. The union keeps it, so the request is a 401 — never anonymous.
 * - a connection's certificates are verified and parsed once, at its first request (the server
 *   refuses renegotiation, so they cannot change); later requests on it check only the
 *   validity period, which a long-lived keep-alive connection may outlive.
 *
 * Why verify here and not in the TLS handshake: the handshake accepts any certificate
 * (`requestCert: true, rejectUnauthorized: false`, as Go's `tls.RequestClientCert`), because a
 * client with no certificate, or with a bearer token instead, must still get through to the
 * other authenticators. Proof of the private key is the handshake's; trust is this file's.
 *
 * What upstream does differently: Go's `Certificate.Verify` also checks name constraints, policy
 * and the key usages of intermediates, and the CA bundle can be reloaded while the server runs
 * (dynamiccertificates); ours is read once at start.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go (Authenticator.AuthenticateRequest, CommonNameUserConversion, DefaultVerifyOptions)
 * @upstream golang/go src/crypto/x509/verify.go (Certificate.Verify: the chain, validity and ExtKeyUsageClientAuth)
 * @chapter 03-api-security
 */
// @peculiar/x509 needs the decorator metadata polyfill loaded before it (as pki-helpers.ts does).
import "reflect-metadata";
import { createHash, X509Certificate } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import * as x509 from "@peculiar/x509";
import { AuthenticationError, type Authenticator, type AuthenticatorResponse } from "./authenticator.ts";

/** The extended key usages a client certificate may carry: clientAuth, or anyExtendedKeyUsage. */
const ExtKeyUsageClientAuth = "1.3.6.1.5.5.7.3.2";
const ExtKeyUsageAny = "2.5.29.37.0";
/** user.CredentialIDKey: the extra key naming the credential (audit logs show which certificate). */
export const CredentialIDKey = "authentication.kubernetes.io/credential-id";
/** Go's maximum chain length is not fixed, but a loop must end somewhere. */
const maxChainLength = 10;

/** Every certificate of a PEM bundle (`--client-ca-file` may hold several CAs). */
export function parseCertificateBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

// #region verify-chain
/**
 * Certificate.Verify with the options x509.go passes: roots = the client CAs, intermediates = the
 * rest of what the client sent, usage = client authentication, at `now`. Returns the chain from
 * the leaf to a root, or throws the reason.
 */
export function verifyClientCertificate(
  peer: readonly X509Certificate[],
  roots: readonly X509Certificate[],
  now: Date,
): X509Certificate[] {
  const [leaf, ...intermediates] = peer;
  if (!leaf) throw new AuthenticationError("x509: no certificate");
  const usages = leaf.keyUsage; // the extended key usage OIDs; undefined when the extension is absent
  if (usages && !usages.includes(ExtKeyUsageClientAuth) && !usages.includes(ExtKeyUsageAny)) {
    throw new AuthenticationError("x509: certificate specifies an incompatible key usage");
  }
  const chain = [leaf];
  for (let cert = leaf; chain.length <= maxChainLength; ) {
    checkValidity(cert, now);
    const root = roots.find((ca) => signedBy(cert, ca));
    if (root) {
      checkValidity(root, now);
      return [...chain, root];
    }
    const next = intermediates.find((ca) => ca !== cert && signedBy(cert, ca));
    if (!next) break;
    chain.push(next);
    cert = next;
  }
  throw new AuthenticationError("x509: certificate signed by unknown authority");
}

/** The issuer's name matches, the issuer is a CA, and its key made the signature. */
function signedBy(cert: X509Certificate, ca: X509Certificate): boolean {
  return ca.ca && cert.checkIssued(ca) && cert.verify(ca.publicKey);
}

function checkValidity(cert: X509Certificate, now: Date): void {
  const notBefore = new Date(cert.validFrom);
  const notAfter = new Date(cert.validTo);
  if (now < notBefore || now > notAfter) {
    const when =
      now > notAfter ? `is after ${notAfter.toISOString()}` : `is before ${notBefore.toISOString()}`;
    throw new AuthenticationError(
      `x509: certificate has expired or is not yet valid: current time ${now.toISOString()} ${when}`,
    );
  }
}
// #endregion verify-chain

// #region common-name-user
/**
 * CommonNameUserConversion: CN is the user, the O values are the groups, and the certificate's
 * SHA-256 fingerprint is the credential id. No CN: not an identity (`null`), not an error.
 */
export function commonNameUser(leaf: X509Certificate): AuthenticatorResponse | null {
  const subject = new x509.X509Certificate(leaf.raw).subjectName;
  const commonName = subject.getField("CN")[0] ?? "";
  if (commonName === "") return null;
  const fingerprint = createHash("sha256").update(leaf.raw).digest("hex");
  return {
    user: {
      name: commonName,
      groups: subject.getField("O"),
      extra: { [CredentialIDKey]: [`X509SHA256=${fingerprint}`] },
    },
  };
}
// #endregion common-name-user

// #region x509-authenticator
/** The certificates the client sent in the handshake, leaf first; none for plain HTTP. */
export function peerCertificates(req: IncomingMessage): X509Certificate[] {
  const socket = req.socket as Partial<TLSSocket>;
  if (typeof socket.getPeerCertificate !== "function") return [];
  const chain: X509Certificate[] = [];
  const seen = new Set<string>();
  // getPeerCertificate(true) links each certificate to its issuer; the last one links to itself.
  for (
    let c = socket.getPeerCertificate(true);
    c?.raw && !seen.has(c.fingerprint256);
    c = c.issuerCertificate
  ) {
    seen.add(c.fingerprint256);
    chain.push(new X509Certificate(c.raw));
  }
  return chain;
}

/** A connection's decision, and the instants between which its whole chain is valid. */
interface ConnectionDecision {
  resp: AuthenticatorResponse | null;
  notBefore: number;
  notAfter: number;
}

export class X509Authenticator implements Authenticator {
  /**
   * Per TLS connection, the decision on its certificates, made at its first request: a
   * connection's certificates cannot change (the server refuses renegotiation, as Go's does —
   * serving.ts), so a keep-alive client's later requests skip the parsing and the signature
   * check. The validity period is still checked on every request, as upstream's per-request
   * Verify does; outside it the chain is verified again, and refused with its reason.
   */
  private readonly byConnection = new WeakMap<object, ConnectionDecision>();

  constructor(
    /** `--client-ca-file`'s certificates. */
    private readonly roots: readonly X509Certificate[],
    private readonly now: () => Date = () => new Date(),
  ) {}

  async authenticateRequest(req: IncomingMessage): Promise<AuthenticatorResponse | null> {
    const known = this.byConnection.get(req.socket);
    if (known) {
      const t = this.now().getTime();
      if (t >= known.notBefore && t <= known.notAfter) return known.resp;
    }
    const peer = peerCertificates(req);
    if (peer.length === 0) return null;
    const chain = verifyClientCertificate(peer, this.roots, this.now());
    const resp = commonNameUser(chain[0] as X509Certificate);
    this.byConnection.set(req.socket, {
      resp,
      notBefore: Math.max(...chain.map((c) => new Date(c.validFrom).getTime())),
      notAfter: Math.min(...chain.map((c) => new Date(c.validTo).getTime())),
    });
    return resp;
  }

  /** The decision on the certificates alone (the unit tests call it with no socket). */
  authenticateChain(peer: readonly X509Certificate[]): AuthenticatorResponse | null {
    const chain = verifyClientCertificate(peer, this.roots, this.now());
    return commonNameUser(chain[0] as X509Certificate);
  }
}
// #endregion x509-authenticator
