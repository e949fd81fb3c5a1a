/**
 * Transport — the connection side of a REST client: one keep-alive agent holding the TLS
 * material, and the headers every request carries (who we are, as which program).
 * Mirrors kubernetes/client-go rest/transport.go (HTTPClientFor, TransportFor) and transport/ (the TLS
 * config, the bearer-token and user-agent round trippers).
 *
 * Solves:
 * - a controller makes thousands of requests; a new TLS handshake for each would cost more than
 *   the request, so connections are kept alive and reused (one agent per clientset);
 * - the CA, client certificate and key may come inline (`*-data`) or from files; both are read
 *   here, once, so a missing file fails at start with its path, not on the first request;
 * - credentials only over TLS: a token sent over plain HTTP would be readable on the wire.
 *
 * Invariants:
 * - an HTTPS config gets an https.Agent with `rejectUnauthorized` unless `insecure`;
 * - `Authorization` is set only for HTTPS hosts; `User-Agent` always;
 * - with `tokenSource` the token is asked for per request (request.ts), so it may change.
 *
 * What upstream does differently: the token of `bearerTokenFile` is re-read every minute
 * (transport/token_source.go, cachingTokenSource) so a rotated service-account token is picked
 * up; we read it once, when the kubeconfig is loaded.
 *
 * @upstream kubernetes/client-go rest/transport.go (HTTPClientFor, TransportFor, TLSConfigFor)
 * @upstream kubernetes/client-go transport/round_trippers.go (HTTPWrappersForConfig, NewBearerAuthRoundTripper, NewUserAgentRoundTripper)
 * @chapter 04-informers
 */
import { readFileSync } from "node:fs";
import { Agent as HTTPAgent } from "node:http";
import { Agent as HTTPSAgent } from "node:https";
import {
  type Config,
  ConfigError,
  defaultKubernetesUserAgent,
  isConfigTransportTLS,
  type TokenSource,
} from "./config.ts";

export interface Transport {
  agent: HTTPAgent | HTTPSAgent;
  /** Headers sent with every request. */
  headers: Record<string, string>;
  /** The bearer token of each request when it changes over time (config.tokenSource; HTTPS only). */
  tokenSource?: TokenSource;
  /** Closes idle kept-alive connections (open watches are left alone). */
  closeIdleConnections(): void;
}

// #region transport
/** HTTPClientFor: the agent and headers for a config. Throws ConfigError for unreadable files. */
export function transportFor(config: Config): Transport {
  const headers: Record<string, string> = { "User-Agent": config.userAgent || defaultKubernetesUserAgent() };
  if (!isConfigTransportTLS(config)) {
    const agent = new HTTPAgent({ keepAlive: true });
    return { agent, headers, closeIdleConnections: () => closeIdle(agent) };
  }
  const tls = config.tlsClientConfig ?? {};
  const agent = new HTTPSAgent({
    keepAlive: true,
    ca: tls.caData ?? readPEM(tls.caFile, "certificate-authority"),
    cert: tls.certData ?? readPEM(tls.certFile, "client-certificate"),
    key: tls.keyData ?? readPEM(tls.keyFile, "client-key"),
    rejectUnauthorized: !tls.insecure,
    servername: tls.serverName || undefined,
  });
  if (config.bearerToken) headers.Authorization = `Bearer ${config.bearerToken.trim()}`;
  return { agent, headers, tokenSource: config.tokenSource, closeIdleConnections: () => closeIdle(agent) };
}
// #endregion transport

function readPEM(path: string | undefined, what: string): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`cannot read the ${what} file ${path}: ${(e as Error).message}`);
  }
}

function closeIdle(agent: HTTPAgent): void {
  for (const sockets of Object.values(agent.freeSockets)) for (const s of sockets ?? []) s.destroy();
}
