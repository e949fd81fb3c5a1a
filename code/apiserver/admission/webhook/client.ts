/**
 * The webhook client — one HTTPS POST of an AdmissionReview to a webhook, verified with its
 * `caBundle`, cut off after its `timeoutSeconds`. Upstream: k8s.io/apiserver
 * pkg/util/webhook/client.go (ClientManager.HookClient) and the REST client's Post().Do(ctx).
 *
 * Solves:
 * - the API server trusts the webhook's certificate only if the configuration's caBundle signed
 *   it (no caBundle: the system's roots), and checks it for the name it meant to reach — the
 *   URL's host, or `<service>.<namespace>.svc` for a service;
 * - a webhook that hangs cannot hang the API server: the call is abandoned at the deadline and
 *   the webhook learns the deadline from `?timeout=10s`, as upstream's client tells it;
 * - every failure to get a usable answer (refused, TLS, timeout, a 500, a body that is not JSON)
 *   becomes an ErrCallingWebhook whose text reads as Go's (`Post "https://…": …`).
 *
 * Invariants:
 * - only 2xx answers are decoded; the answer's size is capped at 3 MiB (upstream's limit on
 *   webhook responses is the REST client's; ours keeps a broken webhook from exhausting memory);
 * - the request body is `application/json`; nothing else is sent but the AdmissionReview.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/webhook/client.go (ClientManager.HookClient: caBundle, service name as ServerName)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go (callAttrMutatingHook: the timeout query parameter)
 * @chapter 03-api-security
 */
import { request } from "node:https";
import { isIP } from "node:net";

export interface HookTarget {
  /** Where to connect, with the path: `https://127.0.0.1:8443/mutate`. */
  url: URL;
  /** The name the serving certificate must carry (SNI too). */
  serverName: string;
  /** PEM certificates; absent: the system's roots. */
  ca?: string;
}

/** A failure to get an answer; `reason` reads as Go's net/http error text. */
export class CallError extends Error {
  override readonly name = "CallError";
}

const maxResponseBytes = 3 * 1024 * 1024;

// #region post
/** POST `body` and return the parsed JSON answer, or throw CallError. */
export async function postAdmissionReview(
  target: HookTarget,
  body: unknown,
  timeoutSeconds: number,
): Promise<unknown> {
  const url = new URL(target.url);
  url.searchParams.set("timeout", `${timeoutSeconds}s`);
  const op = `Post "${url.toString()}"`;
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise<unknown>((resolve, reject) => {
    let settled = false;
    const fail = (reason: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      reject(new CallError(`${op}: ${reason}`));
    };
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          "Content-Length": payload.length,
        },
        // SNI carries names only; an IP is checked against the certificate's IP SANs by itself.
        servername: isIP(target.serverName) ? undefined : target.serverName,
        ca: target.ca,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxResponseBytes) fail("response body too large");
          else chunks.push(chunk);
        });
        res.on("error", (e) => fail(e.message));
        res.on("end", () => {
          if (settled) return;
          const text = Buffer.concat(chunks).toString("utf8");
          const code = res.statusCode ?? 0;
          if (code < 200 || code > 299) {
            return fail(
              `an error on the server (${JSON.stringify(text.trim())}) has prevented the request from succeeding`,
            );
          }
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (e) {
            return fail(`invalid character in response: ${(e as Error).message}`);
          }
          settled = true;
          clearTimeout(timer);
          resolve(parsed);
        });
      },
    );
    // context.WithTimeout: the whole call, connect to last byte.
    const timer = setTimeout(() => fail("context deadline exceeded"), timeoutSeconds * 1000);
    req.on("error", (e: NodeJS.ErrnoException) => fail(transportReason(e, url)));
    req.end(payload);
  });
}
// #endregion post

/** Go's words for the failures a learner will meet: refused, unknown CA, wrong name. */
function transportReason(e: NodeJS.ErrnoException, url: URL): string {
  const hostPort = `${url.hostname.replace(/^\[|\]$/g, "")}:${url.port || "443"}`;
  switch (e.code) {
    case "ECONNREFUSED":
      return `dial tcp ${hostPort}: connect: connection refused`;
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "UNABLE_TO_GET_ISSUER_CERT_LOCALLY":
      return "tls: failed to verify certificate: x509: certificate signed by unknown authority";
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `tls: failed to verify certificate: x509: ${e.message}`;
    case "ECONNRESET":
      return "EOF";
    default:
      return e.message;
  }
}
