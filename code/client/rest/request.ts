/**
 * Request — one call to the API server, built step by step (verb, namespace, resource, name,
 * subresource, parameters, body) and then sent: `do()` for an answer, `watch()` for a stream.
 * Mirrors kubernetes/client-go rest/request.go (Request, URL, Do, Watch, request, tryThrottle).
 *
 * Solves:
 * - every request of every component goes through the same four steps, in this order:
 *   1. wait for the client's token bucket (client-side rate limit, before any timeout starts —
 *      a throttled client must not time out before it sent anything);
 *   2. send, over the shared keep-alive agent, with the config's credentials;
 *   3. on 429/5xx with Retry-After (or a broken GET), wait as asked, take a token again, resend;
 *   4. decode: JSON on success, a StatusError carrying the server's Status otherwise;
 * - a request that hangs (a half-open connection, an overloaded server) must not hang its caller
 *   forever: with a timeout the request is aborted and the caller gets a clear error;
 * - callers cancel with an AbortSignal (Go's context): `stop()` of a watch, a shutdown.
 *
 * Invariants:
 * - the URL is `<host><prefix>/<group path>/namespaces/<ns>/<resource>/<name>/<subresource>`,
 *   with the namespace segment only when a namespace is set and non-empty;
 * - a body is bytes kept in memory, so a retry resends it whole;
 * - a watch's first attempt is not rate limited (upstream: "we specifically don't want to rate
 *   limit watches"); its retries are;
 * - errors are StatusErrors: the server's Status, a synthesized one, or code 0 for no answer
 *   (reason Timeout for our timeout); an abort by the caller rejects with the signal's reason.
 *
 * What upstream does differently: the timeout is an http.Client timeout and also bounds a watch
 * for its whole life; here it bounds a watch only until the server has answered (its length is
 * the server's `timeoutSeconds`). Protobuf and CBOR content types are not offered: JSON only.
 *
 * @upstream kubernetes/client-go rest/request.go (Request, NewRequest, URL, Do, Watch, request, tryThrottle, newStreamWatcher)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/tracing/utils.go (WrapperFor: chapter 8's traceparent)
 * @chapter 04-informers
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import type { KubeObject } from "../../api/meta.ts";
import { injectTraceContext } from "../../tracing/tracing.ts";
import type { StatusError } from "../errors.ts";
import type { Watch } from "../tools/cache/listwatch.ts";
import type { Clock } from "../util/clock.ts";
import type { TokenBucket } from "../util/flowcontrol/token-bucket.ts";
import { syntheticStatus, transformResponse } from "./result.ts";
import type { Transport } from "./transport.ts";
import { StreamWatcher } from "./watch.ts";
import {
  type Attempt,
  DefaultMaxRetries,
  retryableForVerb,
  retryableForWatch,
  WithRetry,
} from "./with-retry.ts";

/** The patch body formats (apimachinery pkg/types PatchType). */
export const JSONPatchType = "application/json-patch+json";
export const MergePatchType = "application/merge-patch+json";
export const StrategicMergePatchType = "application/strategic-merge-patch+json";
export const ApplyPatchType = "application/apply-patch+yaml";
export type PatchType =
  | typeof JSONPatchType
  | typeof MergePatchType
  | typeof StrategicMergePatchType
  | typeof ApplyPatchType;

export type Verb = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What a Request takes from its RESTClient. */
export interface ClientContent {
  base: URL;
  /** `/api/v1` or `/apis/<group>/<version>`. */
  versionedAPIPath: string;
  /** For error messages: `""` for the core group. */
  group: string;
  transport: Transport;
  rateLimiter?: TokenBucket;
  clock: Clock;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Default per-request timeout, ms (0: none). */
  timeout: number;
  warningHandler?: (message: string) => void;
}

type ParamValue = string | number | boolean | undefined | null;

// #region request
export class Request {
  private ns = "";
  private resourceName = "";
  private objectName = "";
  private subresource: string[] = [];
  private readonly query = new URLSearchParams();
  private payload: Buffer | undefined;
  private contentType = "application/json";
  private timeoutMs: number;
  private retries = DefaultMaxRetries;
  // chapter 4: discovery client — the root paths (`/api`, `/apis`) and aggregated discovery's Accept.
  private absolutePath: string | undefined;
  private readonly extraHeaders: OutgoingHttpHeaders = {};

  constructor(
    private readonly c: ClientContent,
    readonly verb: Verb,
  ) {
    this.timeoutMs = c.timeout;
  }

  /** The namespace; `""` means none (cluster-scoped, or all namespaces for a list). */
  namespace(ns: string | undefined): this {
    this.ns = ns ?? "";
    return this;
  }

  resource(resource: string): this {
    this.resourceName = resource;
    return this;
  }

  name(name: string): this {
    if (!name) throw new Error(`${this.verb} ${this.resourceName}: the resource name may not be empty`);
    this.objectName = name;
    return this;
  }

  /** `status`, `binding`, `scale`… (one or more path segments after the name). */
  subResource(...segments: string[]): this {
    this.subresource = segments.filter(Boolean);
    return this;
  }

  /** One query parameter; undefined, null, "", false and 0 are left out (Go's omitempty). */
  param(key: string, value: ParamValue): this {
    if (value === undefined || value === null || value === "" || value === false || value === 0) return this;
    this.query.set(key, String(value));
    return this;
  }

  /** Every field of an options object as query parameters (VersionedParams). */
  params(options: object | undefined): this {
    for (const [k, v] of Object.entries(options ?? {})) this.param(k, v as ParamValue);
    return this;
  }

  /** The body: an object is sent as JSON; a string or bytes as they are. */
  body(body: unknown, contentType?: string): this {
    if (contentType) this.contentType = contentType;
    if (body === undefined) this.payload = undefined;
    else if (Buffer.isBuffer(body)) this.payload = body;
    else if (typeof body === "string") this.payload = Buffer.from(body);
    else this.payload = Buffer.from(JSON.stringify(body));
    return this;
  }

  /** This request's timeout in ms (0: none), overriding the config's. */
  timeout(ms: number): this {
    this.timeoutMs = ms;
    return this;
  }

  /** How many times a retryable failure is retried (0: never). */
  maxRetries(n: number): this {
    this.retries = Math.max(0, n);
    return this;
  }

  // chapter 4: discovery client — AbsPath and SetHeader, as client-go's Request.
  /** A path from the server's root instead of the group version's (`absPath("/apis")`). */
  absPath(...segments: string[]): this {
    this.absolutePath = segments.join("/");
    return this;
  }

  /** A header sent with this request; `Accept` replaces the default `application/json`. */
  setHeader(name: string, value: string): this {
    this.extraHeaders[name] = value;
    return this;
  }

  /** The full URL this request goes to. */
  url(): URL {
    const root = this.absolutePath ?? this.c.versionedAPIPath;
    const segments = root.split("/").filter(Boolean);
    if (this.ns) segments.push("namespaces", this.ns);
    if (this.resourceName) segments.push(this.resourceName);
    if (this.objectName) segments.push(this.objectName);
    segments.push(...this.subresource);
    const path = segments.map(escapeSegment).join("/");
    const url = new URL(this.c.base);
    url.pathname = `${url.pathname.replace(/\/$/, "")}/${path}`;
    // Sorted by key, as Go's url.Values.Encode: the request line reads as client-go's does.
    const query = new URLSearchParams(this.query);
    query.sort();
    url.search = query.toString();
    return url;
  }
  // #endregion request

  // #region do
  /** Sends the request and decodes the answer: the JSON body, or a StatusError. */
  async do<T = unknown>(signal?: AbortSignal): Promise<T> {
    // 1. The client-side rate limit, before the timeout starts.
    await this.throttle(signal);
    const deadline = this.deadline(signal);
    try {
      if (this.timeoutMs > 0) this.query.set("timeout", goDuration(this.timeoutMs));
      const retry = new WithRetry(this.retries, retryableForVerb(this.verb));
      for (;;) {
        let outcome: Attempt;
        let res: IncomingMessage | undefined;
        let body: Buffer = Buffer.alloc(0);
        // 2. Send, and read the whole answer.
        try {
          res = await this.send(deadline.signal);
          body = await readAll(res);
          outcome = { statusCode: res.statusCode ?? 0, headers: res.headers };
        } catch (e) {
          outcome = { error: e as Error };
        }
        // 3. Retry if the server asked for it (or a GET lost its connection).
        const wait = deadline.signal.aborted ? undefined : retry.isNextRetry(outcome);
        if (wait !== undefined) {
          await this.c.sleep(wait, deadline.signal);
          if (!deadline.signal.aborted) await this.throttle(deadline.signal);
          if (!deadline.signal.aborted) continue;
        }
        if (deadline.signal.aborted || "error" in outcome || !res) throw deadline.failure(outcome);
        // 4. Decode.
        this.warnings(res);
        return transformResponse(outcome.statusCode, outcome.headers, body, this.target()) as T;
      }
    } finally {
      deadline.release();
    }
  }
  // #endregion do

  // #region watch
  /** Starts a watch (`?watch=true` is added): resolves once the server answered 200. */
  async watch<T extends KubeObject = KubeObject>(signal?: AbortSignal): Promise<Watch<T>> {
    this.query.set("watch", "true");
    const deadline = this.deadline(signal);
    const retry = new WithRetry(this.retries, retryableForWatch);
    try {
      for (;;) {
        let outcome: Attempt;
        let res: IncomingMessage | undefined;
        try {
          res = await this.send(deadline.signal);
          outcome = { statusCode: res.statusCode ?? 0, headers: res.headers };
        } catch (e) {
          outcome = { error: e as Error };
        }
        if (res && res.statusCode === 200) {
          // From here the watch lives as long as the server, stop() or the caller's signal says.
          deadline.release();
          this.warnings(res);
          return this.streamWatcher<T>(res, signal);
        }
        const body = res ? await readAll(res).catch(() => Buffer.alloc(0)) : Buffer.alloc(0);
        const wait = deadline.signal.aborted ? undefined : retry.isNextRetry(outcome);
        if (wait !== undefined) {
          await this.c.sleep(wait, deadline.signal);
          if (!deadline.signal.aborted) await this.throttle(deadline.signal);
          if (!deadline.signal.aborted) continue;
        }
        if (deadline.signal.aborted || "error" in outcome || !res) throw deadline.failure(outcome);
        transformResponse(outcome.statusCode, outcome.headers, body, this.target());
        throw syntheticStatus(
          outcome.statusCode,
          "",
          `watch ${this.url()}: got status ${outcome.statusCode}`,
        );
      }
    } finally {
      deadline.release();
    }
  }

  /** The open stream as a Watch; the caller's signal, if it aborts later, stops it. */
  private streamWatcher<T extends KubeObject>(res: IncomingMessage, signal?: AbortSignal): Watch<T> {
    const onAbort = () => watcher.stop();
    const watcher = new StreamWatcher<T>(
      res,
      () => res.destroy(),
      () => signal?.removeEventListener("abort", onAbort),
    );
    if (signal?.aborted) watcher.stop();
    else signal?.addEventListener("abort", onAbort, { once: true });
    return watcher;
  }
  // #endregion watch

  private async throttle(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    await this.c.rateLimiter?.accept(signal);
  }

  /**
   * A signal that aborts on the caller's signal or on this request's timeout, and the error to
   * throw for a failed attempt: the timeout, the caller's abort reason, or the transport error.
   */
  private deadline(callerSignal?: AbortSignal) {
    const controller = new AbortController();
    let timedOut = false;
    const onAbort = () => controller.abort(callerSignal?.reason);
    callerSignal?.addEventListener("abort", onAbort, { once: true });
    if (callerSignal?.aborted) onAbort();
    const timer =
      this.timeoutMs > 0
        ? this.c.clock.afterFunc(this.timeoutMs, () => {
            timedOut = true;
            controller.abort();
          })
        : undefined;
    const describe = () => `${this.verb} ${this.url()}`;
    return {
      signal: controller.signal,
      release: () => {
        timer?.stop();
        callerSignal?.removeEventListener("abort", onAbort);
      },
      failure: (outcome: Attempt): unknown => {
        if (timedOut)
          return syntheticStatus(
            0,
            "Timeout",
            `the client gave up on ${describe()} after ${goDuration(this.timeoutMs)} (the request timeout)`,
          );
        if (callerSignal?.aborted) return callerSignal.reason;
        const err = "error" in outcome ? outcome.error : new Error("no answer");
        return noAnswer(describe(), err);
      },
    };
  }

  private async send(signal: AbortSignal): Promise<IncomingMessage> {
    const url = this.url();
    const headers: OutgoingHttpHeaders = {
      ...this.c.transport.headers,
      Accept: "application/json",
      ...this.extraHeaders,
    };
    // A renewed token (config.tokenSource) is read per request, so a clientset outlives its first token.
    const tokenSource = this.c.transport.tokenSource;
    if (tokenSource) headers.Authorization = `Bearer ${(await tokenSource.token()).trim()}`;
    if (this.payload) {
      headers["Content-Type"] = this.contentType;
      headers["Content-Length"] = this.payload.length;
    }
    // chapter 8: a request made inside a traced span carries it as `traceparent`, so the API
    // server's span is its child (upstream: component-base tracing.WrapperFor's otelhttp
    // transport). Without an active span — tracing off — nothing is added.
    injectTraceContext(headers as Record<string, string>);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new Error("aborted before sending"));
      const req = send(url, { method: this.verb, headers, agent: this.c.transport.agent, signal }, resolve);
      req.on("error", reject);
      req.end(this.payload);
    });
  }

  private warnings(res: IncomingMessage): void {
    const handler = this.c.warningHandler;
    const raw = res.headers.warning;
    if (!handler || !raw) return;
    for (const w of Array.isArray(raw) ? raw : [raw]) {
      // `299 - "text"` (RFC 7234); the text is what kubectl prints after "Warning: ".
      const m = /^\s*\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"/.exec(w);
      handler(m ? m[1].replace(/\\(.)/g, "$1") : w);
    }
  }

  private target() {
    const resource =
      this.resourceName && this.c.group ? `${this.resourceName}.${this.c.group}` : this.resourceName;
    return { verb: this.verb, resource, name: this.objectName };
  }
}

/** A path segment escaped as Go's url.URL does: `:` and `@` stay readable (`system:node:n1`). */
function escapeSegment(s: string): string {
  return encodeURIComponent(s).replace(/%3A/gi, ":").replace(/%40/g, "@");
}

function readAll(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => resolve(Buffer.concat(chunks)));
    res.on("error", reject);
    res.on("aborted", () => reject(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })));
  });
}

/** A request that got no answer: code 0, the transport's own words. */
function noAnswer(what: string, err: Error): StatusError {
  const code = (err as NodeJS.ErrnoException).code;
  return syntheticStatus(
    0,
    "",
    `${what}: ${err.message}${code && !err.message.includes(code) ? ` (${code})` : ""}`,
  );
}

/** Go's time.Duration.String for a whole number of milliseconds: 500ms, 30s, 1m30s, 1h0m0s. */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
