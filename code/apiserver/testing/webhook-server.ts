/**
 * A test webhook server — an HTTPS server with a certificate from a throwaway CA, answering
 * AdmissionReviews with whatever handler a test gives it, and recording every review it got.
 * Used by the webhook plugins' tests and by the mutating-webhook exercise. Upstream's tests
 * use a similar server (k8s.io/apiserver pkg/admission/plugin/webhook/testing/webhook_server.go).
 *
 * Solves: a real TLS handshake against the caBundle, without openssl or files on disk — the
 * PKI code (code/pki) makes the CA and the serving certificate in memory.
 *
 * Invariants: `close()` ends every open connection (a sleeping handler included), so a test's
 * finally block never waits for a slow webhook.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/testing/webhook_server.go (NewTestServer)
 * @chapter 03-api-security
 */
import type { IncomingMessage } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import {
  encodeCertPEM,
  encodePrivateKeyPEM,
  newCertificateAuthority,
  newPrivateKey,
  newSignedCert,
} from "../../pki/pki-helpers.ts";

export interface WebhookCerts {
  /** The CA, PEM: a configuration's caBundle is its base64. */
  caPEM: string;
  certPEM: string;
  keyPEM: string;
}

/** A CA and a serving certificate for 127.0.0.1, localhost and the given DNS names. */
export async function newWebhookCerts(dnsNames: readonly string[] = []): Promise<WebhookCerts> {
  const now = new Date();
  const ca = await newCertificateAuthority("webhook-test-ca", "ECDSA-P256", now);
  const key = await newPrivateKey("ECDSA-P256");
  const cert = await newSignedCert(
    {
      commonName: "webhook",
      organization: [],
      altNames: { dnsNames: ["localhost", ...dnsNames], ips: ["127.0.0.1"] },
      usages: ["serverAuth"],
    },
    key,
    ca,
    now,
  );
  return { caPEM: encodeCertPEM(ca.cert), certPEM: encodeCertPEM(cert), keyPEM: encodePrivateKeyPEM(key) };
}

/** caBundle as a configuration carries it (base64 of the PEM). */
export const caBundleOf = (certs: WebhookCerts): string => Buffer.from(certs.caPEM).toString("base64");

/** The AdmissionReview a handler gets (JSON as sent by the API server). */
// biome-ignore lint/suspicious/noExplicitAny: a test handler reads whatever fields it needs
export type Review = any;

/** Answer a review (the JSON body to send back, status 200), or `{ status, body }` for another code. */
export type WebhookHandler = (
  review: Review,
  path: string,
) => unknown | Promise<unknown> | { httpStatus: number; body: string };

export interface WebhookServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Every review received, with the path it was posted to and its `timeout` query. */
  received: { path: string; timeout: string | null; review: Review }[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

// #region webhook-server
export async function startWebhookServer(
  certs: WebhookCerts,
  handler: WebhookHandler,
  host = "127.0.0.1",
): Promise<WebhookServer> {
  const received: WebhookServer["received"] = [];
  const server = createServer({ key: certs.keyPEM, cert: certs.certPEM }, async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "https://localhost");
      const review = JSON.parse(await readBody(req));
      received.push({ path: url.pathname, timeout: url.searchParams.get("timeout"), review });
      const answer = await handler(review, url.pathname);
      const custom = answer as { httpStatus?: number; body?: string };
      if (typeof custom?.httpStatus === "number") {
        res.writeHead(custom.httpStatus, { "Content-Type": "text/plain" });
        res.end(custom.body ?? "");
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(answer));
    } catch (e) {
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
      res.end(String(e));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
// #endregion webhook-server

/** An AdmissionReview answer for `review`: allowed, with optional patch ops, warnings, status. */
export function reviewResponse(
  review: Review,
  opts: { allowed?: boolean; patch?: unknown[]; warnings?: string[]; status?: Record<string, unknown> } = {},
) {
  const response: Record<string, unknown> = { uid: review.request.uid, allowed: opts.allowed ?? true };
  if (opts.patch) {
    response.patchType = "JSONPatch";
    response.patch = Buffer.from(JSON.stringify(opts.patch)).toString("base64");
  }
  if (opts.warnings) response.warnings = opts.warnings;
  if (opts.status) response.status = opts.status;
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
}
