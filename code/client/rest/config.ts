/**
 * rest.Config — everything a client needs to reach one API server: where it is, how to trust it,
 * who we are, and how hard we may push it.
 * Mirrors client-go rest/config.go (Config, TLSClientConfig, DefaultQPS, DefaultBurst).
 *
 * Solves:
 * - one value that kubeconfig loading produces (tools/clientcmd) and every client consumes, so a
 *   controller, the scheduler and a kubelet are configured the same way;
 * - the rate limit is part of the config, because it is a property of the component, not of
 *   one request: a controller-manager sets `--kube-api-qps` once and every client it builds
 *   shares it.
 *
 * Invariants:
 * - `qps: 0` (or absent) means client-go's default, 5 per second; `burst: 0` (or absent) means 10;
 *   a negative `qps` turns client-side rate limiting off (as upstream);
 * - a given `rateLimiter` wins over `qps`/`burst`;
 * - bearer tokens and client certificates are sent only over HTTPS (IsConfigTransportTLS): a
 *   plain-HTTP host gets no credentials, as client-go's clientcmd never copies them there.
 *
 * @upstream kubernetes/client-go rest/config.go (Config, TLSClientConfig, DefaultQPS, DefaultBurst, DefaultKubernetesUserAgent, RESTClientForConfigAndClient)
 * @upstream kubernetes/client-go rest/transport.go (IsConfigTransportTLS)
 * @chapter 04-informers
 */
import { basename } from "node:path";
import { type Clock, realClock, sleep } from "../util/clock.ts";
import {
  DefaultBurst,
  DefaultQPS,
  newTokenBucketRateLimiter,
  type TokenBucket,
} from "../util/flowcontrol/token-bucket.ts";

export { DefaultBurst, DefaultQPS };

// #region config
/** Where a changing bearer token comes from (oauth2.TokenSource); it caches, the client does not. */
export interface TokenSource {
  token(): Promise<string>;
}

/** TLS material: PEM text in `*Data`, or a path in `*File` (data wins when both are set). */
export interface TLSClientConfig {
  /** Skip verifying the server's certificate (`insecure-skip-tls-verify`). Tests only. */
  insecure?: boolean;
  /** The name to check the server's certificate against, if not the host's. */
  serverName?: string;
  /** The CA bundle that signed the server's certificate. */
  caData?: string;
  caFile?: string;
  /** Our client certificate and key: the x509 authenticator reads CN as user, O as groups. */
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
}

export interface Config {
  /** `https://host:port` (or `http://` for the insecure port); a path prefix is kept. */
  host: string;
  tlsClientConfig?: TLSClientConfig;
  /** Sent as `Authorization: Bearer …` (HTTPS only). */
  bearerToken?: string;
  /** Where the token was read from (kept for the record; the token itself is `bearerToken`). */
  bearerTokenFile?: string;
  /**
   * A token that changes over time (a controller's ServiceAccount token, renewed before it
   * expires): asked for before every HTTPS request, and wins over `bearerToken`. Upstream wraps
   * the transport with it (transport.ResettableTokenSourceWrapTransport).
   */
  tokenSource?: TokenSource;
  /** Sustained requests per second; 0 → DefaultQPS (5); negative → no client-side limit. */
  qps?: number;
  /** Requests allowed at once after a quiet spell; 0 → DefaultBurst (10). */
  burst?: number;
  /** A limiter to use instead of one built from qps/burst (a clientset shares one). */
  rateLimiter?: TokenBucket;
  /** Per-request timeout in milliseconds (the whole answer, body included); 0 → none. Watches: see request.ts. */
  timeout?: number;
  /** `User-Agent`; absent → `<program>/v0.0.0 (<os>/<arch>) kubernetes/course`. */
  userAgent?: string;
  /** Called with each `Warning:` header's text (deprecations, admission warnings); absent → ignored. */
  warningHandler?: (message: string) => void;
  /** The clock for rate limiting, retries and timeouts (tests pass a FakeClock). */
  clock?: Clock;
  /** How the client waits for a retry (tests count the waits instead of sleeping). Default: sleep on `clock`. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}
// #endregion config

// #region defaults
/**
 * The rate limiter a client built from `config` uses, as RESTClientForConfigAndClient chooses
 * it: the given one; else a token bucket of qps/burst with 0 meaning the defaults; none if qps < 0.
 */
export function rateLimiterFor(config: Config): TokenBucket | undefined {
  if (config.rateLimiter) return config.rateLimiter;
  const qps = config.qps || DefaultQPS;
  const burst = config.burst || DefaultBurst;
  if (qps <= 0) return undefined;
  if (burst <= 0)
    throw new ConfigError(`burst must be greater than 0 when qps is greater than 0, got burst=${burst}`);
  return newTokenBucketRateLimiter(qps, burst, config.clock ?? realClock);
}
// #endregion defaults

/** Whether requests to this config's host go over TLS (client-go IsConfigTransportTLS). */
export function isConfigTransportTLS(config: Config): boolean {
  return new URL(config.host).protocol === "https:";
}

/** DefaultKubernetesUserAgent: `command/version (os/arch) kubernetes/commit`. */
export function defaultKubernetesUserAgent(): string {
  const command = basename(process.argv[1] ?? "") || "unknown";
  return `${command}/v0.0.0 (${process.platform}/${process.arch}) kubernetes/course`;
}

/** The wait a retry uses: `config.sleep`, or a sleep on the config's clock. */
export function sleeperFor(config: Config): (ms: number, signal?: AbortSignal) => Promise<void> {
  if (config.sleep) return config.sleep;
  const clock = config.clock ?? realClock;
  return (ms, signal) => sleep(clock, ms, signal);
}

/** A config that cannot make a client (no host, a bad URL, burst 0 with a qps): one line with the fix. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** Checks what a client cannot work without; returns the problem or undefined. */
export function validateConfig(config: Config): ConfigError | undefined {
  if (!config.host) return new ConfigError("no server address: set host (the kubeconfig cluster's server)");
  let url: URL;
  try {
    url = new URL(config.host);
  } catch {
    return new ConfigError(`host "${config.host}" is not a URL: use https://host:port`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return new ConfigError(`host "${config.host}" must start with https:// or http://`);
  return undefined;
}
