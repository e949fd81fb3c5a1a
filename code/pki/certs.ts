/**
 * ensurePKI — make, or complete, or check the cluster's PKI directory: the CA, the API server's
 * serving certificate, a client certificate and kubeconfig for every identity, and the
 * service-account key pair.
 * Mirrors upstream's kubernetes/kubernetes cmd/kubeadm/app/phases/certs/certs.go.
 *
 * Solves:
 * - the learner runs it once and gets everything chapter 3's secured API server and every later
 *   component need, in a fixed layout (see certlist.ts);
 * - running it again must be safe: whatever is there and right is kept byte for byte (a kubeconfig
 *   handed out yesterday keeps working), whatever is missing is made — signed by the CA that is
 *   there, so it joins the existing PKI — and whatever is there and wrong stops the run with a
 *   PKIError naming the file and the fix, never replaced behind the learner's back;
 * - `force` starts again from nothing: every key and certificate is made anew;
 * - a run asking for more SANs than the existing serving certificate holds (a new
 *   `--apiserver-cert-extra-sans`) stops as kubeadm's does (validateCertificateWithConfig:
 *   "certificate apiserver is invalid"), naming the missing name; deleting apiserver.crt is the
 *   fix: the next run signs a new one for the kept key, and no kubeconfig embeds it.
 *
 * Invariants:
 * - without `force`, no existing file is rewritten, except a kubeconfig whose CA certificate,
 *   client certificate or key was (re)made in the same run — it is derived from those files and
 *   would otherwise be stale by construction;
 * - every file is written whole (a temporary file renamed into place): a run that is killed leaves
 *   each file either absent or complete, and the next run completes the directory;
 * - private keys and kubeconfigs (which embed a private key) are mode 0600, the rest 0644;
 *   kubeadm's clientcmd writes kubeconfigs 0600 too;
 * - a key and its certificate: the key is written first, as kubeadm's WriteCertAndKey does; a
 *   key found without its certificate gets a new certificate (the key is kept), a certificate
 *   found without its key is an error (nothing can be made to match it);
 * - a `ca.crt` without `ca.key` is accepted as long as nothing needs signing (kubeadm's external
 *   CA mode): every certificate must then exist and be signed by it.
 *
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/phases/certs/certs.go (CreatePKIAssets, CreateServiceAccountKeyAndPublicKeyFiles, writeCertificateAuthorityFilesIfNotExist, writeCertificateFilesIfNotExist, validateCertificateWithConfig)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/apis/kubeadm/validation/validation.go (ValidateCertSANs)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/phases/certs/certlist.go (CertificateTree.CreateTree)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go (CreateJoinControlPlaneKubeConfigFiles, createKubeConfigFileIfNotExists)
 * @chapter 03-api-security
 */
import type { KeyObject, X509Certificate } from "node:crypto";
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isDNS1123Subdomain, isWildcardDNS1123Subdomain, parseIPSloppy } from "../api/string-validation.ts";
import {
  APIServerCertAndKeyBaseName,
  APIServerKubeletClientCertAndKeyBaseName,
  apiServerCertSpec,
  apiServerKubeletClientCertSpec,
  CACertAndKeyBaseName,
  CACommonName,
  type CertSpec,
  ClusterName,
  clientCertSpecs,
  DefaultNodes,
  DefaultServer,
  ServiceAccountKeyBaseName,
} from "./certlist.ts";
import { fixHint, PKIError } from "./errors.ts";
import { createWithCerts, kubeConfigMismatch, serializeKubeConfig } from "./kubeconfig.ts";
import {
  type CertAndKey,
  certificateMismatch,
  DefaultEncryptionAlgorithm,
  type EncryptionAlgorithmType,
  encodeCertPEM,
  encodePrivateKeyPEM,
  encodePublicKeyPEM,
  isSignedBy,
  newPrivateKey,
  newSelfSignedCACert,
  newSignedCert,
  parseCertPEM,
  parsePrivateKeyPEM,
  parsePublicKeyPEM,
  samePublicKey,
} from "./pki-helpers.ts";

export interface EnsurePKIOptions {
  /** The PKI directory; made if missing. */
  dir: string;
  /** Node names: one kubelet identity `node-<name>` each. Default `["node-1"]`. */
  nodes?: readonly string[];
  /** The API server URL the kubeconfigs point at. Default `https://127.0.0.1:6443`. */
  server?: string;
  /**
   * kubeadm's `--apiserver-cert-extra-sans`: more names for the API server's serving certificate,
   * each an IP address or a DNS name (`*.` allowed). An existing certificate without one of them
   * stops the run (kubeadm's validateCertificateWithConfig), with the fix.
   */
  apiServerCertExtraSANs?: readonly string[];
  /** Make every key and certificate again, overwriting what is there. */
  force?: boolean;
  /** The key type of new keys; existing keys are kept whatever their type. Default RSA-2048. */
  encryptionAlgorithm?: EncryptionAlgorithmType;
  /** The start time validity is counted from (tests pin it). Default: now. */
  now?: Date;
  /** Called with one line per file decision, in kubeadm's words (`[certs] Generating "ca" ...`). */
  onProgress?: (line: string) => void;
}

/** Where each file of the layout is, and which flag of which component reads it. */
export interface PKILayout {
  /** kube-apiserver `--client-ca-file` (and every kubeconfig's certificate-authority-data). */
  caCert: string;
  /** Signs new certificates; kube-controller-manager `--cluster-signing-key-file` upstream. */
  caKey: string;
  /** kube-apiserver `--tls-cert-file`. */
  apiServerCert: string;
  /** kube-apiserver `--tls-private-key-file`. */
  apiServerKey: string;
  /** chapter 7: kube-apiserver `--kubelet-client-certificate`. */
  apiServerKubeletClientCert: string;
  /** chapter 7: kube-apiserver `--kubelet-client-key`. */
  apiServerKubeletClientKey: string;
  /** kube-apiserver `--service-account-signing-key-file`. */
  serviceAccountKey: string;
  /** kube-apiserver `--service-account-key-file` (verifies the tokens). */
  serviceAccountPublicKey: string;
  /** Every client identity, in certlist order: admin, scheduler, controller-manager, nodes; a component takes `--kubeconfig`. */
  identities: { id: string; user: string; groups: string[]; cert: string; key: string; kubeconfig: string }[];
}

export interface EnsurePKIResult {
  dir: string;
  layout: PKILayout;
  /** File names (relative to `dir`) written by this run, in the order written. */
  written: string[];
  /** File names found right and left untouched. */
  kept: string[];
  /** Problems that do not stop the run (an expired certificate, as kubeadm only warns). */
  warnings: string[];
}

/** The layout for a directory and a list of node names (no file is touched). */
export function pkiLayout(dir: string, nodes: readonly string[] = DefaultNodes): PKILayout {
  const at = (name: string) => join(dir, name);
  return {
    caCert: at(`${CACertAndKeyBaseName}.crt`),
    caKey: at(`${CACertAndKeyBaseName}.key`),
    apiServerCert: at(`${APIServerCertAndKeyBaseName}.crt`),
    apiServerKey: at(`${APIServerCertAndKeyBaseName}.key`),
    apiServerKubeletClientCert: at(`${APIServerKubeletClientCertAndKeyBaseName}.crt`),
    apiServerKubeletClientKey: at(`${APIServerKubeletClientCertAndKeyBaseName}.key`),
    serviceAccountKey: at(`${ServiceAccountKeyBaseName}.key`),
    serviceAccountPublicKey: at(`${ServiceAccountKeyBaseName}.pub`),
    identities: clientCertSpecs(nodes).map((spec) => ({
      id: spec.id,
      user: spec.commonName,
      groups: [...spec.organization],
      cert: at(`${spec.id}.crt`),
      key: at(`${spec.id}.key`),
      kubeconfig: at(`${spec.id}.kubeconfig`),
    })),
  };
}

/** One run's state: what it was asked, and what it has done so far. */
interface Run {
  dir: string;
  force: boolean;
  algorithm: EncryptionAlgorithmType;
  now: Date;
  progress: (line: string) => void;
  written: string[];
  kept: string[];
  warnings: string[];
}

/** A certificate and key as they are on disk: parsed, and their exact PEM text. */
interface Loaded {
  cert: X509Certificate;
  certPEM: string;
  /** Absent only for a CA found without its key. */
  key?: KeyObject;
  keyPEM?: string;
  /** True when this run wrote the certificate or the key. */
  fresh: boolean;
}

// #region ensure-pki
/**
 * Makes what is missing, keeps what is right, and stops at the first file that is wrong. The
 * order is kubeadm's: the CA first (everything else is signed by it), then each certificate,
 * the service-account keys, and last the kubeconfigs, which embed the files before them.
 *
 * A problem with the directory's contents or with the options is returned as a PKIError; a
 * failure of the file system itself (no permission, disk full) is thrown, as from `fs`.
 *
 * ```ts
 * const result = await ensurePKI({ dir, nodes: ["node-1", "node-2"], onProgress: console.log });
 * if (result instanceof PKIError) fail(result.message); // names the file and the fix
 * ```
 */
export async function ensurePKI(options: EnsurePKIOptions): Promise<EnsurePKIResult | PKIError> {
  const nodes = options.nodes ?? DefaultNodes;
  const server = options.server ?? DefaultServer;
  const extraSANs = options.apiServerCertExtraSANs ?? [];
  const invalid = validateOptions(nodes, server, extraSANs);
  if (invalid) return invalid;

  const run: Run = {
    dir: options.dir,
    force: options.force ?? false,
    algorithm: options.encryptionAlgorithm ?? DefaultEncryptionAlgorithm,
    now: options.now ?? new Date(),
    progress: options.onProgress ?? (() => {}),
    written: [],
    kept: [],
    warnings: [],
  };
  await mkdir(run.dir, { recursive: true });

  const ca = await ensureCA(run);
  if (ca instanceof PKIError) return ca;

  const clients = clientCertSpecs(nodes);
  const leaves = new Map<string, Loaded>();
  const made = await inBatches(
    run,
    [apiServerCertSpec(extraSANs), apiServerKubeletClientCertSpec(), ...clients],
    (r, spec) => ensureCertAndKey(r, spec, ca),
  );
  if (made instanceof PKIError) return made;
  for (const [spec, leaf] of made) leaves.set(spec.id, leaf);

  const sa = await ensureServiceAccountKeys(run);
  if (sa instanceof PKIError) return sa;

  const done = await inBatches(run, clients, (r, spec) =>
    ensureKubeConfig(r, spec, ca, leaves.get(spec.id)!, server),
  );
  if (done instanceof PKIError) return done;

  return {
    dir: run.dir,
    layout: pkiLayout(run.dir, nodes),
    written: run.written,
    kept: run.kept,
    warnings: run.warnings,
  };
}
// #endregion ensure-pki

/**
 * Identities made BatchSize at a time: key generation and signing run on libuv's thread pool, so
 * a thousand hollow nodes' identities (chapter 8's kubemark) take the machine's cores instead of
 * one (1,000 nodes: 15 s sequential, 9.7 s in batches, on 2 cores). Each item works on a run of its own, merged in item order
 * afterwards: `written`, `kept`, the progress lines and the first error are as a sequential run's.
 */
const BatchSize = 16;

async function inBatches<S, T>(
  run: Run,
  items: readonly S[],
  ensure: (run: Run, item: S) => Promise<T | PKIError>,
): Promise<[S, T][] | PKIError> {
  const out: [S, T][] = [];
  for (let i = 0; i < items.length; i += BatchSize) {
    const batch = items.slice(i, i + BatchSize).map((item) => {
      const lines: string[] = [];
      const own: Run = { ...run, progress: (l) => lines.push(l), written: [], kept: [], warnings: [] };
      return { item, own, lines, result: ensure(own, item) };
    });
    for (const b of batch) {
      const result = await b.result;
      for (const l of b.lines) run.progress(l);
      run.written.push(...b.own.written);
      run.kept.push(...b.own.kept);
      run.warnings.push(...b.own.warnings);
      if (result instanceof PKIError) {
        // The rest of the batch is let finish (its files are whole), then the first error wins.
        await Promise.allSettled(batch.map((x) => x.result));
        return result;
      }
      out.push([b.item, result]);
    }
  }
  return out;
}

/** The options ensurePKI refuses before touching a file (the pki command checks them as flags). */
export function validateOptions(
  nodes: readonly string[],
  server: string,
  extraSANs: readonly string[] = [],
): PKIError | undefined {
  const seen = new Set<string>();
  for (const name of nodes) {
    const problems = isDNS1123Subdomain(name);
    if (problems.length > 0) {
      return new PKIError("InvalidOption", `invalid node name "${name}": ${problems.join("; ")}`);
    }
    if (seen.has(name)) return new PKIError("InvalidOption", `node name "${name}" is given twice`);
    seen.add(name);
  }
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return new PKIError("InvalidOption", `invalid server URL "${server}": expected https://host:port`);
  }
  if (url.protocol !== "https:") {
    return new PKIError(
      "InvalidOption",
      `invalid server URL "${server}": the API server is reached over https`,
    );
  }
  return validateCertSANs(extraSANs);
}

/** kubeadm's ValidateCertSANs: each extra SAN is an IP, a DNS subdomain, or `*.` and one. */
export function validateCertSANs(sans: readonly string[]): PKIError | undefined {
  for (const san of sans) {
    const dns = isDNS1123Subdomain(san);
    const wildcard = isWildcardDNS1123Subdomain(san);
    if (dns.length === 0 || wildcard.length === 0 || parseIPSloppy(san)) continue;
    return new PKIError(
      "InvalidOption",
      `invalid extra SAN "${san}": altname is not a valid IP address, DNS label or a DNS label with subdomain wildcards: ${dns.join("; ")}; ${wildcard.join("; ")}`,
    );
  }
  return undefined;
}

// #region ca
/** The CA: kept if present (and a CA, and its key matches), made if not. */
async function ensureCA(run: Run): Promise<Loaded | PKIError> {
  const name = CACertAndKeyBaseName;
  const certFile = `${name}.crt`;
  const keyFile = `${name}.key`;
  const found = await readPair(run, certFile, keyFile);

  let key: KeyObject | undefined;
  if (found.keyPEM !== undefined) {
    const parsed = parsePrivateKeyPEM(found.keyPEM);
    if (typeof parsed === "string") return unreadable(run, keyFile, `failure loading ${name} key: ${parsed}`);
    key = parsed;
  }

  if (found.certPEM === undefined) {
    const newKey = key === undefined;
    key ??= await newPrivateKey(run.algorithm);
    run.progress(
      newKey
        ? `[certs] Generating "${name}" certificate and key`
        : `[certs] Generating "${name}" certificate for the existing key`,
    );
    const cert = await newSelfSignedCACert(CACommonName, key, run.now);
    const keyPEM = newKey ? encodePrivateKeyPEM(key) : found.keyPEM!;
    if (newKey) await writeFileWhole(run, keyFile, keyPEM, 0o600);
    else keep(run, keyFile);
    const certPEM = encodeCertPEM(cert);
    await writeFileWhole(run, certFile, certPEM, 0o644);
    return { cert, certPEM, key, keyPEM, fresh: true };
  }

  const cert = parseCertPEM(found.certPEM);
  if (typeof cert === "string")
    return unreadable(run, certFile, `failure loading ${name} certificate: ${cert}`);
  if (!cert.ca) {
    return new PKIError(
      "Mismatch",
      `certificate ${name} is not a CA (${path(run, certFile)}); ${fixHint(certFile)}`,
      path(run, certFile),
    );
  }
  if (key && !matches(cert, key)) return keyMismatch(run, certFile, keyFile);
  checkPeriod(run, name, cert);
  keep(run, certFile);
  if (key) keep(run, keyFile);
  run.progress(
    key
      ? `[certs] Using the existing "${name}" certificate and key`
      : `[certs] Using the existing "${name}" certificate (no ${keyFile}: every certificate must exist already)`,
  );
  return { cert, certPEM: found.certPEM, key, keyPEM: found.keyPEM, fresh: false };
}
// #endregion ca

// #region cert-and-key
/**
 * One certificate and its key (writeCertificateFilesIfNotExist): both missing → made; key only →
 * a new certificate for it; both there → checked against the key, the CA and the spec.
 */
async function ensureCertAndKey(run: Run, spec: CertSpec, ca: Loaded): Promise<Loaded | PKIError> {
  const certFile = `${spec.id}.crt`;
  const keyFile = `${spec.id}.key`;
  const found = await readPair(run, certFile, keyFile);

  let key: KeyObject | undefined;
  if (found.keyPEM !== undefined) {
    const parsed = parsePrivateKeyPEM(found.keyPEM);
    if (typeof parsed === "string")
      return unreadable(run, keyFile, `failure loading ${spec.id} key: ${parsed}`);
    key = parsed;
  }

  if (found.certPEM === undefined) {
    if (!ca.key) {
      return new PKIError(
        "Missing",
        `${certFile} is missing and cannot be made: ${CACertAndKeyBaseName}.key is not in ${run.dir}, so nothing can be signed; put it beside ${CACertAndKeyBaseName}.crt, or re-run with --force to make every key and certificate again`,
        path(run, certFile),
      );
    }
    const newKey = key === undefined;
    run.progress(
      newKey
        ? `[certs] Generating "${spec.id}" certificate and key`
        : `[certs] Generating "${spec.id}" certificate for the existing key`,
    );
    key ??= await newPrivateKey(run.algorithm);
    const keyPEM = newKey ? encodePrivateKeyPEM(key) : found.keyPEM!;
    if (newKey) await writeFileWhole(run, keyFile, keyPEM, 0o600);
    else keep(run, keyFile);
    const cert = await newSignedCert(spec, key, ca as CertAndKey, run.now);
    const certPEM = encodeCertPEM(cert);
    await writeFileWhole(run, certFile, certPEM, 0o644);
    // kubeadm's line for a serving certificate: which names a client may dial it by.
    if (spec.usages.includes("serverAuth"))
      run.progress(
        `[certs] ${spec.id} serving cert is signed for DNS names [${spec.altNames.dnsNames.join(" ")}] and IPs [${spec.altNames.ips.join(" ")}]`,
      );
    return { cert, certPEM, key, keyPEM, fresh: true };
  }

  if (key === undefined) {
    return new PKIError(
      "Missing",
      `certificate ${spec.id} has no key: ${path(run, keyFile)} is missing, and no key can be made for an existing certificate; ${fixHint(certFile)}`,
      path(run, keyFile),
    );
  }
  const cert = parseCertPEM(found.certPEM);
  if (typeof cert === "string")
    return unreadable(run, certFile, `failure loading ${spec.id} certificate: ${cert}`);
  if (!matches(cert, key)) return keyMismatch(run, certFile, keyFile);
  checkPeriod(run, spec.id, cert);
  if (!isSignedBy(cert, ca.cert)) {
    return new PKIError(
      "NotSignedByCA",
      `certificate ${spec.id} is not signed by corresponding CA (${path(run, certFile)} was not signed by ${path(run, `${CACertAndKeyBaseName}.crt`)}); ${fixHint(certFile)}`,
      path(run, certFile),
    );
  }
  const mismatch = certificateMismatch(cert, spec);
  if (mismatch) {
    return new PKIError(
      "Mismatch",
      `certificate ${spec.id} is invalid: ${mismatch} (${path(run, certFile)}); ${fixHint(certFile)}`,
      path(run, certFile),
    );
  }
  keep(run, keyFile);
  keep(run, certFile);
  run.progress(`[certs] Using the existing "${spec.id}" certificate and key`);
  return { cert, certPEM: found.certPEM, key, keyPEM: found.keyPEM, fresh: false };
}
// #endregion cert-and-key

// #region service-account-keys
/**
 * The key pair that signs service-account tokens (CreateServiceAccountKeyAndPublicKeyFiles): the
 * API server signs with sa.key and verifies with sa.pub, so the two must stay one pair.
 */
async function ensureServiceAccountKeys(run: Run): Promise<undefined | PKIError> {
  const name = ServiceAccountKeyBaseName;
  const keyFile = `${name}.key`;
  const pubFile = `${name}.pub`;
  const { certPEM: pubPEM, keyPEM } = await readPair(run, pubFile, keyFile);

  if (keyPEM === undefined) {
    if (pubPEM !== undefined) {
      return new PKIError(
        "Missing",
        `${path(run, keyFile)} is missing, and no private key can be made for the existing ${pubFile}; ${fixHint(pubFile)}`,
        path(run, keyFile),
      );
    }
    run.progress(`[certs] Generating "${name}" key and public key`);
    const key = await newPrivateKey(run.algorithm);
    await writeFileWhole(run, keyFile, encodePrivateKeyPEM(key), 0o600);
    await writeFileWhole(run, pubFile, encodePublicKeyPEM(key), 0o644);
    return undefined;
  }

  const key = parsePrivateKeyPEM(keyPEM);
  if (typeof key === "string") return unreadable(run, keyFile, `failure loading ${name} key: ${key}`);
  if (pubPEM === undefined) {
    run.progress(`[certs] Using the existing "${name}" key; writing its public key`);
    keep(run, keyFile);
    await writeFileWhole(run, pubFile, encodePublicKeyPEM(key), 0o644);
    return undefined;
  }
  const pub = parsePublicKeyPEM(pubPEM);
  if (typeof pub === "string") return unreadable(run, pubFile, `failure loading ${name} public key: ${pub}`);
  if (!samePublicKey(key, pub)) {
    return new PKIError(
      "KeyMismatch",
      `${path(run, pubFile)} is not the public key of ${path(run, keyFile)}; ${fixHint(pubFile)}`,
      path(run, pubFile),
    );
  }
  keep(run, keyFile);
  keep(run, pubFile);
  run.progress(`[certs] Using the existing "${name}" key`);
  return undefined;
}
// #endregion service-account-keys

// #region kubeconfig
/** One identity's kubeconfig: the CA, its certificate and key, and the server URL. */
async function ensureKubeConfig(
  run: Run,
  spec: CertSpec,
  ca: Loaded,
  leaf: Loaded,
  server: string,
): Promise<undefined | PKIError> {
  const file = `${spec.id}.kubeconfig`;
  const expected = {
    server,
    clusterName: ClusterName,
    userName: spec.commonName,
    caCert: ca.certPEM,
    clientCert: leaf.certPEM,
    clientKey: leaf.keyPEM!,
  };
  const text = run.force ? undefined : await readOptional(path(run, file));
  if (text !== undefined && !ca.fresh && !leaf.fresh) {
    const mismatch = kubeConfigMismatch(text, path(run, file), expected);
    if (mismatch) return new PKIError("Mismatch", `${mismatch}; ${fixHint(file)}`, path(run, file));
    keep(run, file);
    run.progress(`[kubeconfig] Using existing kubeconfig file: "${path(run, file)}"`);
    return undefined;
  }
  run.progress(
    text === undefined || run.force
      ? `[kubeconfig] Writing "${file}" kubeconfig file`
      : `[kubeconfig] Writing "${file}" kubeconfig file again: the certificate it embeds was made in this run`,
  );
  await writeFileWhole(run, file, serializeKubeConfig(createWithCerts(expected)), 0o600);
  return undefined;
}
// #endregion kubeconfig

function path(run: Run, file: string): string {
  return join(run.dir, file);
}

function keep(run: Run, file: string): void {
  run.kept.push(file);
}

/** A certificate (or public key) file and its key file, as text; `force` reads nothing. */
async function readPair(run: Run, certFile: string, keyFile: string) {
  if (run.force) return { certPEM: undefined, keyPEM: undefined };
  return { certPEM: await readOptional(path(run, certFile)), keyPEM: await readOptional(path(run, keyFile)) };
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}

let tmpSeq = 0;

/** Writes a temporary file and renames it into place, so the file is never seen half written. */
async function writeFileWhole(run: Run, file: string, data: string, mode: number): Promise<void> {
  const target = path(run, file);
  const tmp = `${target}.${process.pid}.${++tmpSeq}.tmp`;
  await writeFile(tmp, data, { mode });
  await chmod(tmp, mode); // the umask may have narrowed the mode given to open(2)
  await rename(tmp, target);
  run.written.push(file);
}

function matches(cert: X509Certificate, key: KeyObject): boolean {
  try {
    return cert.checkPrivateKey(key);
  } catch {
    return false; // a key of another type (an EC key for an RSA certificate) cannot match
  }
}

function keyMismatch(run: Run, certFile: string, keyFile: string): PKIError {
  return new PKIError(
    "KeyMismatch",
    `private key ${path(run, keyFile)} does not match the public key of certificate ${path(run, certFile)}; ${fixHint(certFile, keyFile)}`,
    path(run, keyFile),
  );
}

function unreadable(run: Run, file: string, what: string): PKIError {
  return new PKIError("Unreadable", `${what} (${path(run, file)}); ${fixHint(file)}`, path(run, file));
}

/** CheckCertificatePeriodValidity: kubeadm warns, and goes on, about a certificate out of date. */
function checkPeriod(run: Run, name: string, cert: X509Certificate): void {
  const period = `NotBefore: ${cert.validFrom}, NotAfter: ${cert.validTo}`;
  const now = run.now.getTime();
  let problem: string | undefined;
  if (now < new Date(cert.validFrom).getTime()) problem = `the certificate is not valid yet: ${period}`;
  if (now > new Date(cert.validTo).getTime()) problem = `the certificate has expired: ${period}`;
  if (!problem) return;
  const line = `WARNING: could not validate bounds for certificate ${name}: ${problem}`;
  run.warnings.push(line);
  run.progress(line);
}
