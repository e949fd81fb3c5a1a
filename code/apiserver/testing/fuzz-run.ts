/**
 * The bad-input fuzz runner — sends generated requests (fuzz.ts, fuzz-secured.ts) to a running
 * API server over HTTP or HTTPS, and judges each answer by the one rule: a client's mistake is a
 * 4xx Status.
 * No upstream counterpart: test harness (upstream fuzzes its codecs with apimachinery's fuzzer).
 *
 * Solves:
 * - a reset connection must point at the request that caused it: one connection per request;
 * - the secured server needs the client's TLS side under the test's control (the CA it trusts,
 *   the client certificate it presents — a valid one, an expired one, one of another CA), so
 *   requests go through Node's https client with those options, not through fetch;
 * - a failure is read and replayed from one line: the index, the request and the answer.
 *
 * Invariants:
 * - an answer passes when its status is below 500 and, for 4xx, its body is a JSON Status with
 *   that code; a reset connection, a timeout, a 5xx or a non-Status error fails;
 * - requests run `parallel` at a time, and the failures come back in index order.
 *
 * @upstream none — test harness (upstream fuzzes its codecs with go-fuzz: apimachinery's pkg/api/apitesting/fuzzer)
 * @chapter 02-apiserver
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { type FuzzRequest, fuzzRequest } from "./fuzz.ts";

export interface FuzzFailure {
  index: number;
  request: FuzzRequest;
  status: number | "reset" | "timeout";
  body: string;
  /** Why the answer breaks the rule, when it is more than "not a 4xx Status". */
  why?: string;
}

/** The client's TLS side: the CA it trusts, and the certificate it presents (if any). */
export interface ClientTLS {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface FuzzAnswer {
  status: number | "reset" | "timeout";
  body: string;
  contentType: string;
}

// #region run
/** Sends one request; resolves with its status and body (a reset or a timeout is a status too). */
export function send(
  base: string,
  req: FuzzRequest,
  timeoutMs = 10_000,
  tls?: ClientTLS,
): Promise<FuzzAnswer> {
  return new Promise((resolve) => {
    const url = new URL(base);
    const secure = url.protocol === "https:";
    const options = {
      // A connection per request: a reset then points at the request that caused it.
      agent: false as const,
      host: url.hostname,
      port: url.port,
      method: req.method,
      path: req.path,
      headers: { ...req.headers, "content-length": req.body?.length ?? 0 },
      ...(secure ? tls : {}),
    };
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString("utf8"),
          contentType: String(res.headers["content-type"] ?? ""),
        }),
      );
      res.on("error", () => resolve({ status: "reset", body: "", contentType: "" }));
    };
    const r = secure ? httpsRequest(options, onResponse) : httpRequest(options, onResponse);
    r.setTimeout(timeoutMs, () => {
      r.destroy();
      resolve({ status: "timeout", body: "", contentType: "" });
    });
    r.on("error", () => resolve({ status: "reset", body: "", contentType: "" }));
    r.end(req.body);
  });
}

/**
 * Whether an answer keeps the rule: < 500, and a 4xx is a JSON Status carrying its code. One 5xx
 * is not an error but upstream's "wait and retry": 504 Timeout for a resourceVersion the server
 * has not reached yet (client-go's reflector retries on it), which a client cannot tell apart
 * from a server that is behind.
 */
export function acceptable(status: number | "reset" | "timeout", body: string, method: string): boolean {
  if (status === 504 && body.includes("Timeout: Too large resource version")) return true;
  if (typeof status !== "number" || status >= 500) return false;
  if (status < 400) return true;
  if (method === "HEAD") return true; // no body by definition
  return isStatus(body, status);
}

/** A Kubernetes `Status` failure (kind Status, apiVersion v1) carrying `code`. */
export function isStatus(body: string, code: number): boolean {
  try {
    const s = JSON.parse(body) as { kind?: string; apiVersion?: string; code?: number; status?: string };
    return s.kind === "Status" && s.apiVersion === "v1" && s.code === code && s.status === "Failure";
  } catch {
    return false;
  }
}

/**
 * Runs `count` checks, `parallel` at a time; `check(index)` sends request `index` and returns its
 * failure, if any. The failures come back in index order.
 */
export async function runFuzz(
  count: number,
  check: (index: number) => Promise<FuzzFailure | undefined>,
  parallel = 4,
): Promise<FuzzFailure[]> {
  const failures: FuzzFailure[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const failure = await check(next++);
      if (failure) failures.push(failure);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return failures.sort((a, b) => a.index - b.index);
}

/** Chapter 2's fuzz: `count` requests of the seed against `base`; returns the failures. */
export function fuzz(base: string, seed: number, count: number, parallel = 4): Promise<FuzzFailure[]> {
  return runFuzz(
    count,
    async (index) => {
      const req = fuzzRequest(seed, index);
      const res = await send(base, req);
      if (acceptable(res.status, res.body, req.method)) return undefined;
      return { index, request: req, status: res.status, body: res.body.slice(0, 400) };
    },
    parallel,
  );
}

/** One line per failure: enough to read it and to replay it. */
export function describeFailure(f: FuzzFailure): string {
  const b = f.request.body;
  const shown =
    b === undefined
      ? ""
      : b.length > 160
        ? `${b.subarray(0, 160).toString("utf8")}… (${b.length} bytes)`
        : b.toString("utf8");
  const why = f.why ? ` (${f.why})` : "";
  return `#${f.index} ${f.request.note}${why}: ${f.request.method} ${f.request.path.slice(0, 200)} [${f.request.headers["content-type"] ?? ""}] ${JSON.stringify(shown)} → ${f.status} ${f.body}`;
}
// #endregion run
