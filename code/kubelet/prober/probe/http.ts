/**
 * The httpGet probe — healthy if a GET answers 200–399.
 * Mirrors kubernetes/kubernetes pkg/probe/http/http.go.
 *
 * Solves:
 * - "is the server answering requests?", asked the way a client would, with the user's path,
 *   port, scheme and headers; the kubelet sends `User-Agent: kube-probe/1.32` and an Accept of any type
 *   unless the probe sets them, so a server can tell probes from traffic.
 * - a redirect must not send the kubelet to an arbitrary host (the probe runs on the node, with
 *   the node's network reach): redirects are followed only while they stay on the same host name;
 *   one to another host stops there and the probe is a `warning` — logically a success, with a
 *   ProbeWarning event saying the redirects were cut short.
 * - a server that streams a huge body must not cost the kubelet memory: at most 10 KiB is read.
 *
 * Invariants:
 * - the status decides, never the body: [200, 300) → `success` with the body; [300, 400) (a
 *   redirect not followed) → `warning`; anything else → `failure` with "HTTP probe failed with
 *   statuscode: N" — never the body, so a page's content cannot leak into an event (issue 99425).
 * - a request that fails or outlives `timeoutMs` is a `failure` whose text is Go's url.Error
 *   (`Get "http://…/": dial tcp …: connect: connection refused`).
 * - more than 10 redirects on one host is a failure ("stopped after 10 redirects"), as Go's client.
 *
 * @upstream kubernetes/kubernetes pkg/probe/http/http.go (DoHTTPProbe, RedirectChecker, maxRespBodyLength)
 * @upstream kubernetes/kubernetes pkg/probe/http/request.go (NewRequestForHTTPGetAction, GetProbeUrl, newProbeRequest, userAgent)
 * @chapter 07-kubelet
 */

import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Container, HTTPGetAction } from "../../../api/core.ts";
import { type Dial, joinHostPort, type ProbeOutcome, resolveContainerPort } from "./probe.ts";
import { dialErrorText } from "./tcp.ts";

/** 10 KiB: how much of a response body the probe reads before it stops. */
export const maxRespBodyLength = 10 * 1024;
/** kube-<purpose>/<major>.<minor> of the kubelet's version (v1.32 here). */
export const probeUserAgent = "kube-probe/1.32";

export interface ProbeRequest {
  url: URL;
  /** Header name → values, as Go's http.Header (names as given). */
  headers: Map<string, string[]>;
  /** Where to connect for the URL's host and port (the pod network); the URL itself when absent. */
  dial?: Dial;
}

// #region probe-request
/** The request an httpGet action describes; `podIP` stands in when the action names no host. */
export function newRequestForHTTPGetAction(
  httpGet: HTTPGetAction,
  container: Container,
  podIP: string,
): ProbeRequest {
  const scheme = (httpGet.scheme ?? "HTTP").toLowerCase();
  const host = httpGet.host || podIP;
  const port = resolveContainerPort(httpGet.port, container);
  const path = httpGet.path ?? "";
  const url = new URL(`${scheme}://${joinHostPort(host, port)}${path.startsWith("/") ? "" : "/"}${path}`);
  const headers = new Map<string, string[]>();
  for (const h of httpGet.httpHeaders ?? []) {
    const name = canonicalHeaderKey(h.name);
    headers.set(name, [...(headers.get(name) ?? []), h.value]);
  }
  if (!headers.has("User-Agent")) headers.set("User-Agent", [probeUserAgent]);
  // An Accept the user set to "" means "send none"; an absent one means "anything".
  if (!headers.has("Accept")) headers.set("Accept", ["*/*"]);
  else if ((headers.get("Accept") ?? [""])[0] === "") headers.delete("Accept");
  return { url, headers };
}
// #endregion probe-request

/** Go's textproto.CanonicalMIMEHeaderKey: "user-agent" → "User-Agent". */
function canonicalHeaderKey(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

// #region do-http-probe
/** What one GET answered: its status, its Location header, at most maxRespBodyLength of its body. */
export interface HTTPResponse {
  status: number;
  location?: string;
  body: string;
}

/** A response's judgment: request `follow` next (a redirect on the same host), or the probe's outcome. */
export type HTTPJudgment = { follow: URL } | ProbeOutcome;

/**
 * Judges one response. `requested` is every URL asked so far: the probe's own first, the one that
 * answered `res` last (Go's CheckRedirect sees the same list as `via`).
 */
export function judgeHTTPResponse(res: HTTPResponse, requested: readonly URL[]): HTTPJudgment {
  const url = requested[requested.length - 1];
  const next = isRedirect(res.status) && res.location ? new URL(res.location, url) : undefined;
  if (next && next.hostname === requested[0].hostname) {
    if (requested.length >= 10)
      return { result: "failure", output: `Get ${JSON.stringify(next.href)}: stopped after 10 redirects` };
    return { follow: next };
  }
  // A redirect to another host stops here: its 3xx is the answer (Go's ErrUseLastResponse).
  if (res.status >= 200 && res.status < 400) {
    if (res.status >= 300)
      return { result: "warning", output: `Probe terminated redirects, Response body: ${res.body}` };
    return { result: "success", output: res.body };
  }
  // Never the body: a page's content must not leak into an event (issue 99425).
  return { result: "failure", output: `HTTP probe failed with statuscode: ${res.status}` };
}

/**
 * GETs `req.url` within `timeoutMs` (the whole exchange, redirects included) and judges each
 * answer with `judge` — the real judgeHTTPResponse unless a test (exercise 7.2) plugs in its own.
 */
export async function doHTTPProbe(
  req: ProbeRequest,
  timeoutMs: number,
  judge: typeof judgeHTTPResponse = judgeHTTPResponse,
): Promise<ProbeOutcome> {
  const deadline = Date.now() + timeoutMs;
  const requested = [req.url];
  for (;;) {
    const url = requested[requested.length - 1];
    let res: HTTPResponse;
    try {
      res = await get(url, req.headers, deadline - Date.now(), req.dial);
    } catch (err) {
      const text = `Get ${JSON.stringify(url.href)}: ${(err as Error).message}`;
      // Headers came but the body did not: upstream returns this as an error, so the prober
      // discards the run instead of counting it as a failure.
      if (err instanceof BodyReadError) return { result: "failure", output: "", error: new Error(text) };
      return { result: "failure", output: text };
    }
    const judged = judge(res, [...requested]);
    if (!("follow" in judged)) return judged;
    requested.push(judged.follow);
  }
}
// #endregion do-http-probe

class BodyReadError extends Error {}

/** The statuses Go's client follows (with a Location); 300 and 304 are answers, not redirects. */
export function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

/** One GET: the status, the Location and at most maxRespBodyLength bytes of body. */
function get(url: URL, headers: Map<string, string[]>, timeoutMs: number, dial?: Dial) {
  return new Promise<HTTPResponse>((resolve, reject) => {
    const outgoing: Record<string, string | string[]> = {};
    // Go sends one Host (req.Host, from the header if set, else the URL's); the rest as given.
    for (const [k, v] of headers) outgoing[k] = k === "Host" ? v[0] : v;
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const hostname = url.hostname.replace(/^\[|\]$/g, "");
    const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
    const addr = joinHostPort(hostname, port);
    // The pod network: connect where the pod really listens, but send the pod's address as Host.
    const target = dial ? dial(hostname, port) : { host: hostname, port };
    if (!target) return reject(new Error(`dial tcp ${addr}: connect: connection refused`));
    if (dial && !outgoing.Host) outgoing.Host = url.host;
    let gotHeaders = false;
    const r = send(url, {
      // hostname, not host: a URL's hostname would win over an options' host.
      hostname: target.host,
      port: target.port,
      method: "GET",
      headers: outgoing,
      agent: false, // DisableKeepAlives: every probe is a fresh connection
      rejectUnauthorized: false, // InsecureSkipVerify: a pod's serving certificate is not the node's to check
    });
    const timer = setTimeout(
      () => {
        r.destroy();
        reject(
          gotHeaders
            ? new BodyReadError(
                "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
              )
            : new Error("context deadline exceeded (Client.Timeout exceeded while awaiting headers)"),
        );
      },
      Math.max(0, timeoutMs),
    );
    r.once("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new Error(err.code ? dialErrorText(err, addr) : err.message));
    });
    r.once("response", (res: IncomingMessage) => {
      gotHeaders = true;
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        clearTimeout(timer);
        r.destroy();
        const location = res.headers.location;
        resolve({
          status: res.statusCode ?? 0,
          location,
          body: Buffer.concat(chunks).subarray(0, maxRespBodyLength).toString(),
        });
      };
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        // Non-fatal truncation: stop reading and judge by the status already received.
        if (size >= maxRespBodyLength) finish();
      });
      res.once("end", finish);
      res.once("error", () => {}); // destroy() after truncation may surface here; the outcome is settled
    });
    r.end();
  });
}
