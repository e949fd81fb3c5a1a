/**
 * Secure serving — the HTTPS listener of `--secure-port`: its serving certificate (given, found in
 * `--cert-dir`, or made there self-signed) and a TLS handshake that asks for, but does not
 * demand, a client certificate. Upstream: k8s.io/apiserver pkg/server/options/serving.go and
 * pkg/server/secure_serving.go.
 *
 * Solves:
 * - a client must know it talks to *the* API server before it sends a token: TLS with a
 *   certificate the client's kubeconfig trusts (`certificate-authority-data`);
 * - a server started with no certificate at all still serves HTTPS: it makes a self-signed one
 *   for its own names, as upstream's MaybeDefaultWithSelfSignedCerts does (kubectl then needs
 *   `--insecure-skip-tls-verify` or the generated `apiserver.crt`);
 * - a client certificate is the strongest credential, but not the only one: the handshake
 *   requests one (`requestCert`) and accepts any or none (`rejectUnauthorized: false`, Go's
 *   `tls.RequestClientCert`); whether it is trusted is the x509 authenticator's decision.
 *
 * Invariants:
 * - `--tls-cert-file` and `--tls-private-key-file` come together or not at all;
 * - without them, `<cert-dir>/apiserver.crt` and `.key` are used if both exist, made if neither
 *   does (the certificate file holds the leaf, then its self-signed CA), an error if only one
 *   does; with no `--cert-dir`, the certificate is made in memory and lost on exit;
 * - the handshake advertises the client CAs (`ca`), as upstream's server does: Go clients such as
 *   kubectl send their certificate only if one of those CAs issued it.
 * - an idle keep-alive connection is kept 90 s (upstream's IdleTimeout), not Node's 5 s;
 * - a connection is never renegotiated (Go's server does not renegotiate either): its client
 *   certificate is fixed at the handshake, which the x509 authenticator relies on.
 *
 * What upstream does differently: kube-apiserver's default `--cert-dir` is /var/run/kubernetes
 * (ours: none, in memory), its `--bind-address` 0.0.0.0 (ours: 127.0.0.1), and it reloads
 * certificate files when they change (dynamiccertificates); its generated CA and certificate are
 * valid one year (ours: pki-helpers' 10 years and 1 year).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/serving.go (SecureServingOptions, MaybeDefaultWithSelfSignedCerts)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/secure_serving.go (SecureServingInfo.tlsConfig, Serve: "Serving securely on"; RunServer: IdleTimeout 90 s)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/util/cert/cert.go (GenerateSelfSignedCertKeyWithFixtures, CanReadCertAndKey)
 * @chapter 03-api-security
 */
import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import type { RequestListener } from "node:http";
import { createServer, type Server } from "node:https";
import { isIP } from "node:net";
import { join } from "node:path";
import {
  DefaultEncryptionAlgorithm,
  encodeCertPEM,
  encodePrivateKeyPEM,
  newCertificateAuthority,
  newPrivateKey,
  newSignedCert,
} from "../pki/pki-helpers.ts";

export interface SecureServingOptions {
  /** `--bind-address`, default 127.0.0.1. */
  bindAddress?: string;
  /** `--tls-cert-file`: the serving certificate (then intermediates), PEM. */
  tlsCertFile?: string;
  /** `--tls-private-key-file`. */
  tlsPrivateKeyFile?: string;
  /** `--cert-dir`: where a self-signed certificate is kept (absent: in memory). */
  certDir?: string;
}

export interface ServingCert {
  cert: string;
  key: string;
  /** How it was found, one log line in upstream's words (`Generated self-signed cert in-memory`). */
  origin: string;
}

/** PairName of kube-apiserver's self-signed certificate. */
export const PairName = "apiserver";

/** Why the serving options cannot be used; the message names the flag and what to do. */
export class ServingConfigError extends Error {
  override readonly name = "ServingConfigError";
}

// #region serving-cert
/** The certificate and key to serve with: given, found in `--cert-dir`, or made. */
export async function servingCertKey(opts: SecureServingOptions): Promise<ServingCert> {
  const { tlsCertFile: certFile, tlsPrivateKeyFile: keyFile } = opts;
  if (certFile || keyFile) {
    if (!certFile || !keyFile) {
      throw new ServingConfigError("--tls-cert-file and --tls-private-key-file must be given together");
    }
    return {
      cert: await readFlagFile("--tls-cert-file", certFile),
      key: await readFlagFile("--tls-private-key-file", keyFile),
      origin: `Serving with the certificate (${certFile}, ${keyFile})`,
    };
  }
  const pair = opts.certDir
    ? { cert: join(opts.certDir, `${PairName}.crt`), key: join(opts.certDir, `${PairName}.key`) }
    : undefined;
  if (pair) {
    const [hasCert, hasKey] = await Promise.all([exists(pair.cert), exists(pair.key)]);
    if (hasCert && hasKey) {
      return {
        cert: await readFile(pair.cert, "utf8"),
        key: await readFile(pair.key, "utf8"),
        origin: `Serving with the certificate (${pair.cert}, ${pair.key})`,
      };
    }
    if (hasCert || hasKey) {
      throw new ServingConfigError(
        `found ${hasCert ? pair.cert : pair.key} without ${hasCert ? pair.key : pair.cert}: a certificate and key must be supplied as a pair (delete it to have both made again)`,
      );
    }
  }
  const generated = await generateSelfSignedCertKey(opts.bindAddress ?? "127.0.0.1");
  if (!pair) return { ...generated, origin: "Generated self-signed cert in-memory" };
  await mkdir(opts.certDir as string, { recursive: true });
  // The key first, as WriteCertAndKey: a run killed in between leaves a key, never a lone cert.
  await writeFile(pair.key, generated.key, { mode: 0o600 });
  await writeFile(pair.cert, generated.cert, { mode: 0o644 });
  return { ...generated, origin: `Generated self-signed cert (${pair.cert}, ${pair.key})` };
}

/**
 * GenerateSelfSignedCertKey: a CA named `<host>-ca@<unix time>` made for this one certificate,
 * and a serving certificate `<host>@<unix time>` it signs, for the names a client may dial —
 * kube-apiserver's in-cluster names, and the bind address (or `localhost` when it binds every
 * address). The certificate file holds both, leaf first.
 */
export async function generateSelfSignedCertKey(bindAddress: string): Promise<{ cert: string; key: string }> {
  const now = new Date();
  const stamp = Math.floor(now.getTime() / 1000);
  const unspecified = bindAddress === "0.0.0.0" || bindAddress === "::";
  const host = unspecified ? "localhost" : bindAddress;
  const ca = await newCertificateAuthority(`${host}-ca@${stamp}`, DefaultEncryptionAlgorithm, now);
  const key = await newPrivateKey(DefaultEncryptionAlgorithm);
  const dnsNames = ["kubernetes.default.svc", "kubernetes.default", "kubernetes"];
  if (unspecified || !isIP(host)) dnsNames.push("localhost");
  const cert = await newSignedCert(
    {
      commonName: `${host}@${stamp}`,
      organization: [],
      altNames: { dnsNames, ips: isIP(host) ? [host] : ["127.0.0.1"] },
      usages: ["serverAuth"],
    },
    key,
    ca,
    now,
  );
  return { cert: encodeCertPEM(cert) + encodeCertPEM(ca.cert), key: encodePrivateKeyPEM(key) };
}
// #endregion serving-cert

// #region secure-server
/** The longest request head the secure port reads (upstream's MaxHeaderBytes). */
export const maxHeaderBytes = 1 << 20;

/**
 * The HTTPS server: the serving certificate, and a client certificate requested but optional.
 * `clientCA` (the `--client-ca-file` PEM) is only advertised here; trust is decided by x509.ts.
 */
export function newSecureServer(
  servingCert: ServingCert,
  clientCA: string | undefined,
  handler: RequestListener,
): Server {
  const server = createServer(
    {
      cert: servingCert.cert,
      key: servingCert.key,
      requestCert: true,
      rejectUnauthorized: false,
      ...(clientCA ? { ca: clientCA } : {}),
      minVersion: "TLSv1.2", // upstream's default floor
      // Found by the secured fuzz (testing/fuzz-secured.ts): Node's default header limit is 16 KiB,
      // and a longer request head (a 40 KiB bearer token) got a bodiless 431 and a closed
      // connection before any authenticator saw it. Upstream's server takes 1 MiB
      // (secure_serving.go: `MaxHeaderBytes: 1 << 20`), so such a token is a 401 Status there
      // and here; past 1 MiB both answer 431.
      maxHeaderSize: maxHeaderBytes,
    },
    handler,
  );
  // Go's TLS server never renegotiates, so a connection's client certificate is the one of its
  // handshake for its whole life — which lets x509.ts decide once per connection.
  server.on("secureConnection", (socket) => socket.disableRenegotiation());
  // Upstream's IdleTimeout (secure_serving.go): an idle keep-alive connection stays 90 s, not
  // Node's 5 s — a client pausing a few seconds would otherwise pay a new TLS handshake and its
  // certificate's verification again.
  server.keepAliveTimeout = 90_000;
  return server;
}
// #endregion secure-server

async function readFlagFile(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (e) {
    throw new ServingConfigError(`invalid ${flag} "${path}": ${(e as Error).message}`);
  }
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
