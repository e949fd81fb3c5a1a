/**
 * PKI helpers — make a key, a self-signed CA and certificates signed by it; read them back from
 * PEM; and answer the questions a re-run must ask of files it finds (does this key belong to
 * this certificate? did our CA sign it? does it say what we would write?).
 * Mirrors upstream's kubernetes/kubernetes cmd/kubeadm/app/util/pkiutil/pki_helpers.go.
 *
 * Solves:
 * - every component of the cluster proves who it is with a certificate the API server trusts, so
 *   one CA must sign them all, each with the subject the authorizers read (CN = user, O = groups)
 *   and the key usage TLS checks (serverAuth for the API server, clientAuth for clients);
 * - files written by kubeadm's Go code and by ours must be interchangeable: the same PEM block
 *   types (`RSA PRIVATE KEY`, `EC PRIVATE KEY`, `PUBLIC KEY`, `CERTIFICATE`), the same extensions,
 *   the same validity rules — so a learner can compare our `ca.crt` with a kubeadm cluster's.
 *
 * Invariants (kubeadm 1.32's, cmd/kubeadm/app/util/pkiutil and phases/certs/certlist.go):
 * - keys are RSA 2048 (kubeadm's default `encryptionAlgorithm: RSA-2048`) or ECDSA P-256
 *   (`ECDSA-P256`); certificates are signed with SHA-256 (sha256WithRSAEncryption or
 *   ecdsa-with-SHA256), as Go's x509.CreateCertificate does for those keys;
 * - serial numbers are uniformly random in [1, 2^63 − 1), as NewSignedCert draws them;
 * - notBefore is the start time minus `CertificateBackdate` (5 minutes, to survive small clock
 *   jumps); notAfter is the start time plus 10 years for the CA (`CACertificateValidityPeriod`)
 *   and 1 year for every other certificate (`CertificateValidityPeriod`);
 * - the CA has basicConstraints CA:TRUE and keyUsage digitalSignature, keyEncipherment,
 *   keyCertSign, and its own CN as a DNS name; a leaf has CA:FALSE, keyUsage digitalSignature and
 *   keyEncipherment, and extKeyUsage from its spec. Go adds the subject key identifier to a CA and
 *   the authority key identifier to what it signs; so do we.
 *
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/util/pkiutil/pki_helpers.go (NewCertificateAuthority, NewSelfSignedCACert, NewSignedCert, GeneratePrivateKey, EncodeCertPEM, EncodePublicKeyPEM, TryLoadCertFromDisk, TryLoadKeyFromDisk)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/constants/constants.go (CertificateBackdate, CertificateValidityPeriod, CACertificateValidityPeriod)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/util/keyutil/key.go (MarshalPrivateKeyToPEM, ParsePrivateKeyPEM)
 * @chapter 03-api-security
 */
// @peculiar/x509 resolves its algorithm registry with tsyringe, which needs the Reflect metadata
// API installed before the library loads — so this import must stay first.
import "reflect-metadata";
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  type KeyObject,
  X509Certificate as NodeX509Certificate,
  randomBytes,
  webcrypto,
} from "node:crypto";
import { promisify } from "node:util";
import * as x509 from "@peculiar/x509";

/** kubeadm's `EncryptionAlgorithmType` values that this course supports. */
export type EncryptionAlgorithmType = "RSA-2048" | "ECDSA-P256";
/** kubeadm's default (`ClusterConfiguration.encryptionAlgorithm` unset). */
export const DefaultEncryptionAlgorithm: EncryptionAlgorithmType = "RSA-2048";

const minute = 60_000;
const day = 24 * 60 * minute;
/** Subtracted from notBefore, "to allow small time jumps". */
export const CertificateBackdate = 5 * minute;
/** Every signed (non-CA) certificate: one year. */
export const CertificateValidityPeriod = 365 * day;
/** The CA: ten years. */
export const CACertificateValidityPeriod = 10 * 365 * day;

/** The extended key usages kubeadm's certificates carry (x509.ExtKeyUsage). */
export type ExtKeyUsage = "serverAuth" | "clientAuth";
const extKeyUsageOID: Record<ExtKeyUsage, string> = {
  serverAuth: x509.ExtendedKeyUsage.serverAuth,
  clientAuth: x509.ExtendedKeyUsage.clientAuth,
};

/** certutil.Config, as kubeadm fills it for one certificate. */
export interface CertConfig {
  commonName: string;
  organization: readonly string[];
  altNames: { dnsNames: readonly string[]; ips: readonly string[] };
  usages: readonly ExtKeyUsage[];
}

/** A certificate and its private key. */
export interface CertAndKey {
  cert: NodeX509Certificate;
  key: KeyObject;
}

// #region keys
/** GeneratePrivateKey: a new key of the cluster's encryption algorithm. */
export async function newPrivateKey(algorithm: EncryptionAlgorithmType): Promise<KeyObject> {
  const generate = promisify(generateKeyPair);
  const pair =
    algorithm === "ECDSA-P256"
      ? await generate("ec", { namedCurve: "P-256" })
      : await generate("rsa", { modulusLength: 2048 });
  return pair.privateKey;
}

/**
 * keyutil.MarshalPrivateKeyToPEM: PKCS#1 `RSA PRIVATE KEY` for RSA and SEC 1 `EC PRIVATE KEY`
 * for ECDSA — the blocks Go writes, which every Kubernetes component reads.
 */
export function encodePrivateKeyPEM(key: KeyObject): string {
  const type = key.asymmetricKeyType === "ec" ? "sec1" : "pkcs1";
  return key.export({ type, format: "pem" }).toString();
}

/** EncodePublicKeyPEM: the PKIX `PUBLIC KEY` block (sa.pub). */
export function encodePublicKeyPEM(key: KeyObject): string {
  return createPublicKey(key).export({ type: "spki", format: "pem" }).toString();
}

/** The private key in a PEM text, if it is one of the two kinds kubeadm accepts. */
export function parsePrivateKeyPEM(pem: string): KeyObject | string {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (e) {
    return `data does not contain a valid private key: ${(e as Error).message}`;
  }
  // TryLoadKeyFromDisk: "Allow RSA and ECDSA formats only" — and of ECDSA, the curves kubeadm makes.
  if (key.asymmetricKeyType !== "rsa" && key.asymmetricKeyType !== "ec")
    return "is neither in RSA nor ECDSA format";
  if (key.asymmetricKeyType === "ec" && ecCurve(key) === undefined)
    return `is an ECDSA key on curve ${key.asymmetricKeyDetails?.namedCurve}, not P-256 or P-384`;
  return key;
}

/** The public key in a PEM text (sa.pub). */
export function parsePublicKeyPEM(pem: string): KeyObject | string {
  try {
    return createPublicKey(pem);
  } catch (e) {
    return `data does not contain a valid public key: ${(e as Error).message}`;
  }
}

/** True when both keys are the same public key (compared as their PKIX DER encoding). */
export function samePublicKey(a: KeyObject, b: KeyObject): boolean {
  const der = (k: KeyObject) =>
    (k.type === "public" ? k : createPublicKey(k)).export({ type: "spki", format: "der" });
  return der(a).equals(der(b));
}
// #endregion keys

// #region certificates
/** EncodeCertPEM: one `CERTIFICATE` block, 64 columns, as Go's pem.Encode. */
export function encodeCertPEM(cert: NodeX509Certificate): string {
  const lines = cert.raw.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

/** The first certificate of a PEM text ("the sender's certificate must come first"). */
export function parseCertPEM(pem: string): NodeX509Certificate | string {
  try {
    return new NodeX509Certificate(pem);
  } catch (e) {
    return `data does not contain a valid certificate: ${(e as Error).message}`;
  }
}

/** NewCertificateAuthority: a new key, and a self-signed CA certificate for it. */
export async function newCertificateAuthority(
  commonName: string,
  algorithm: EncryptionAlgorithmType,
  now: Date,
): Promise<CertAndKey> {
  const key = await newPrivateKey(algorithm);
  return { cert: await newSelfSignedCACert(commonName, key, now), key };
}

/**
 * NewSelfSignedCACert: a CA certificate for `key`, signed by itself, valid from
 * `now − CertificateBackdate` for CACertificateValidityPeriod. Given the key of an existing CA,
 * it re-issues that CA: same name, same key, so what the old certificate signed still verifies.
 */
export async function newSelfSignedCACert(
  commonName: string,
  key: KeyObject,
  now: Date,
): Promise<NodeX509Certificate> {
  const spki = createPublicKey(key).export({ type: "spki", format: "der" });
  const name = subjectName({ commonName, organization: [] });
  const notBefore = new Date(now.getTime() - CertificateBackdate);
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerialNumber(),
      subject: name,
      issuer: name,
      notBefore,
      notAfter: new Date(notBefore.getTime() + CACertificateValidityPeriod),
      publicKey: spki,
      signingKey: await signingKey(key),
      signingAlgorithm: signatureAlgorithm(key),
      extensions: [
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature |
            x509.KeyUsageFlags.keyEncipherment |
            x509.KeyUsageFlags.keyCertSign,
          true,
        ),
        new x509.BasicConstraintsExtension(true, undefined, true),
        await x509.SubjectKeyIdentifierExtension.create(spki, false, webcrypto as Crypto),
        // NewSelfSignedCACert: `DNSNames: []string{cfg.CommonName}`.
        new x509.SubjectAlternativeNameExtension([{ type: "dns", value: commonName }], false),
      ],
    },
    webcrypto as Crypto,
  );
  return new NodeX509Certificate(Buffer.from(cert.rawData));
}

/**
 * NewSignedCert: a certificate for `key`'s public half, signed by the CA, valid from
 * `now − CertificateBackdate` for CertificateValidityPeriod.
 */
export async function newSignedCert(
  cfg: CertConfig,
  key: KeyObject,
  ca: CertAndKey,
  now: Date,
): Promise<NodeX509Certificate> {
  const notBefore = new Date(now.getTime() - CertificateBackdate);
  const extensions: x509.Extension[] = [
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    new x509.ExtendedKeyUsageExtension(
      cfg.usages.map((u) => extKeyUsageOID[u]),
      false,
    ),
    new x509.BasicConstraintsExtension(false, undefined, true),
  ];
  const caKeyId = new x509.X509Certificate(ca.cert.raw).getExtension(
    x509.SubjectKeyIdentifierExtension,
  )?.keyId;
  if (caKeyId) extensions.push(new x509.AuthorityKeyIdentifierExtension(caKeyId, false));
  const names = [
    ...cfg.altNames.dnsNames.map((value) => ({ type: "dns" as const, value })),
    ...cfg.altNames.ips.map((value) => ({ type: "ip" as const, value })),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names, false));
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerialNumber(),
      subject: subjectName(cfg),
      // The issuer is the CA's subject exactly as encoded in its certificate, so that a verifier's
      // byte-for-byte name match finds the CA.
      issuer: new x509.X509Certificate(ca.cert.raw).subjectName,
      notBefore,
      notAfter: new Date(notBefore.getTime() + CertificateValidityPeriod),
      publicKey: createPublicKey(key).export({ type: "spki", format: "der" }),
      signingKey: await signingKey(ca.key),
      signingAlgorithm: signatureAlgorithm(ca.key),
      extensions,
    },
    webcrypto as Crypto,
  );
  return new NodeX509Certificate(Buffer.from(cert.rawData));
}

/** A uniform random value in [1, 2^63 − 1), as hex — what NewSignedCert draws. */
function randomSerialNumber(): string {
  for (;;) {
    const bytes = randomBytes(8);
    bytes[0] &= 0x7f; // below 2^63: a positive INTEGER, never the sign bit
    const value = bytes.readBigUInt64BE();
    if (value >= 1n && value < 2n ** 63n - 1n) return value.toString(16).padStart(2, "0");
  }
}

/** pkix.Name{CommonName, Organization}, in Go's order: O before CN. */
function subjectName(cfg: Pick<CertConfig, "commonName" | "organization">): x509.Name {
  return new x509.Name([...cfg.organization.map((o) => ({ O: [o] })), { CN: [cfg.commonName] }]);
}

/**
 * What Go's CreateCertificate signs with for this key (signingParamsForKey): SHA-256 with RSA and
 * with P-256, SHA-384 with P-384 — a CA brought by the learner may be either curve.
 */
function signatureAlgorithm(key: KeyObject): Algorithm | EcdsaParams {
  if (key.asymmetricKeyType !== "ec") return { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } as Algorithm;
  return { name: "ECDSA", hash: ecCurve(key) === "P-384" ? "SHA-384" : "SHA-256" } as EcdsaParams;
}

/** The same private key as a WebCrypto key, which is what @peculiar/x509 signs with. */
async function signingKey(key: KeyObject): Promise<CryptoKey> {
  const algorithm =
    key.asymmetricKeyType === "ec"
      ? { name: "ECDSA", namedCurve: ecCurve(key) }
      : { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
  return (await webcrypto.subtle.importKey(
    "pkcs8",
    key.export({ type: "pkcs8", format: "der" }),
    algorithm,
    false,
    ["sign"],
  )) as CryptoKey;
}

/** The WebCrypto name of an EC key's curve (OpenSSL calls P-256 prime256v1). */
function ecCurve(key: KeyObject): "P-256" | "P-384" | undefined {
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return curve === "prime256v1" ? "P-256" : curve === "secp384r1" ? "P-384" : undefined;
}
// #endregion certificates

// #region checks
/** The parts of a certificate a re-run compares with what it would write. */
export interface CertificateFacts {
  commonName: string[];
  organization: string[];
  dnsNames: string[];
  ips: string[];
  extKeyUsages: ExtKeyUsage[];
  isCA: boolean;
}

/** Reads subject, SANs, extKeyUsage and basicConstraints through @peculiar/x509's parser. */
export function certificateFacts(cert: NodeX509Certificate): CertificateFacts {
  const parsed = new x509.X509Certificate(cert.raw);
  const san = parsed.getExtension(x509.SubjectAlternativeNameExtension);
  const eku = parsed.getExtension(x509.ExtendedKeyUsageExtension);
  const basic = parsed.getExtension(x509.BasicConstraintsExtension);
  const items = san?.names.items ?? [];
  return {
    commonName: parsed.subjectName.getField("CN"),
    organization: parsed.subjectName.getField("O"),
    dnsNames: items.filter((n) => n.type === "dns").map((n) => n.value),
    ips: items.filter((n) => n.type === "ip").map((n) => canonicalIP(n.value)),
    extKeyUsages: (Object.keys(extKeyUsageOID) as ExtKeyUsage[]).filter((u) =>
      (eku?.usages ?? []).includes(extKeyUsageOID[u]),
    ),
    isCA: basic?.ca ?? false,
  };
}

/**
 * validateCertificateWithConfig, widened: kubeadm checks only that the certificate is valid for
 * every SAN asked; we also compare the subject and the extended key usages, because here the
 * subject *is* the identity (a kubelet certificate with the wrong CN is a different user).
 * Returns what differs, in words, or undefined.
 */
export function certificateMismatch(cert: NodeX509Certificate, cfg: CertConfig): string | undefined {
  const facts = certificateFacts(cert);
  const asked = { commonName: [cfg.commonName], organization: [...cfg.organization] };
  const subject = (cn: readonly string[], o: readonly string[]) =>
    [...o.map((v) => `O=${v}`), ...cn.map((v) => `CN=${v}`)].join(", ");
  if (!sameList(facts.commonName, asked.commonName) || !sameList(facts.organization, asked.organization)) {
    return `its subject is "${subject(facts.commonName, facts.organization)}", not "${subject(asked.commonName, asked.organization)}"`;
  }
  for (const name of cfg.altNames.dnsNames) {
    if (!facts.dnsNames.includes(name)) return `it is not valid for the DNS name ${name}`;
  }
  for (const ip of cfg.altNames.ips) {
    if (!facts.ips.includes(canonicalIP(ip))) return `it is not valid for the IP address ${ip}`;
  }
  for (const usage of cfg.usages) {
    if (!facts.extKeyUsages.includes(usage)) return `it lacks the extended key usage ${usage}`;
  }
  return undefined;
}

/** True when `ca` signed `cert`: the issuer name matches and the signature verifies. */
export function isSignedBy(cert: NodeX509Certificate, ca: NodeX509Certificate): boolean {
  return cert.checkIssued(ca) && cert.verify(ca.publicKey);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** One spelling per address (`0:0:0:0:0:0:0:1` and `::1` are the same SAN). */
function canonicalIP(ip: string): string {
  if (!ip.includes(":")) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}
// #endregion checks
