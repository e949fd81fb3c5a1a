/**
 * WithRetry — when a failed attempt is tried again, and after how long.
 * Mirrors client-go rest/with_retry.go (withRetry.IsNextRetry, checkWait) and the retryable-error
 * rules of rest/request.go (request, watchInternal: isErrRetryableFunc).
 *
 * Solves:
 * - an API server that is overloaded answers 429 (priority and fairness) or 503 with a
 *   `Retry-After` header: it is asking the client to come back later, so the client waits that
 *   long and tries again, instead of failing the controller's sync or hammering the server;
 * - a connection reset mid-GET (a restarting API server, a load balancer dropping idle
 *   connections) is worth one more try, because a GET changes nothing; a POST is not retried,
 *   because the server may have acted on it.
 *
 * Invariants (upstream 1.32):
 * - at most `maxRetries` retries (default 10) after the first attempt;
 * - a response is retried only if it is 429 or 5xx **and** carries an integer `Retry-After`;
 *   a 503 without the header is returned to the caller at once;
 * - the wait is exactly `Retry-After` seconds (client-go's per-URL backoff is off unless the
 *   KUBE_CLIENT_BACKOFF_* variables are set — not modelled here);
 * - a connection error is retried (as if `Retry-After: 1`) only for GET (`do`) — and for a watch
 *   on any probable-EOF or timeout error;
 * - each retry goes through the client's rate limiter again (before it is sent).
 *
 * @upstream kubernetes/client-go rest/with_retry.go (withRetry, IsNextRetry, checkWait, retryAfterResponse)
 * @upstream kubernetes/client-go rest/request.go (retryAfterSeconds, Request.request: isErrRetryableFunc, maxRetries: 10)
 * @chapter 04-informers
 */
import type { IncomingHttpHeaders } from "node:http";

/** NewRequest's default: about ten retries on a Retry-After answer. */
export const DefaultMaxRetries = 10;

// #region check-wait
/** The `Retry-After` header as whole seconds, if it is one (an HTTP date is ignored, as upstream). */
export function retryAfterSeconds(headers: IncomingHttpHeaders): number | undefined {
  const h = headers["retry-after"];
  const value = Array.isArray(h) ? h[0] : h;
  if (value === undefined || !/^\s*-?\d+\s*$/.test(value)) return undefined;
  return Number.parseInt(value, 10);
}

/** checkWait: seconds to wait if the server asked us to (429 or any 5xx, with Retry-After). */
export function checkWait(statusCode: number, headers: IncomingHttpHeaders): number | undefined {
  if (statusCode !== 429 && statusCode < 500) return undefined;
  return retryAfterSeconds(headers);
}
// #endregion check-wait

/** One attempt's outcome: an answer's code and headers, or the error that stopped it. */
export type Attempt = { statusCode: number; headers: IncomingHttpHeaders } | { error: Error };

// #region is-next-retry
export class WithRetry {
  /** Attempts that failed and were considered for a retry. */
  attempts = 0;

  constructor(
    readonly maxRetries: number,
    /** Which transport errors may be retried (GET connection resets; any EOF for a watch). */
    private readonly isRetryableError: (err: Error) => boolean,
  ) {}

  /**
   * IsNextRetry: milliseconds to wait before trying again, or undefined to stop here and hand the
   * outcome to the caller.
   */
  isNextRetry(outcome: Attempt): number | undefined {
    this.attempts++;
    if (this.attempts > this.maxRetries) return undefined;
    if ("error" in outcome) {
      // A retryable error is treated as an artificial 500 with Retry-After: 1.
      return this.isRetryableError(outcome.error) ? 1000 : undefined;
    }
    const seconds = checkWait(outcome.statusCode, outcome.headers);
    return seconds === undefined ? undefined : Math.max(0, seconds) * 1000;
  }
}
// #endregion is-next-retry

const connectionResetCodes = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED"]);

/** net.IsConnectionReset || net.IsProbableEOF: the connection broke under a request. */
export function isProbableEOF(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  if (code && connectionResetCodes.has(code)) return true;
  return /socket hang up|connection reset|unexpected EOF|closed network connection/i.test(err.message);
}

/** The `do()` rule: only a GET is retried after a broken connection. */
export const retryableForVerb = (verb: string) => (err: Error) => verb === "GET" && isProbableEOF(err);

/** The watch rule: a broken connection or a timeout while starting the watch is retried. */
export const retryableForWatch = (err: Error) =>
  isProbableEOF(err) || (err as NodeJS.ErrnoException).code === "ETIMEDOUT";
