/**
 * RESTClient — a client for one API group version (`/api/v1`, `/apis/apps/v1`): it hands out
 * Requests that share its base URL, connections, credentials and rate limiter.
 * Mirrors kubernetes/client-go rest/client.go (RESTClient, NewRESTClient, Verb, Get, Post, Put, Patch,
 * Delete) and rest/config.go (RESTClientFor).
 *
 * Solves:
 * - the rate limit must hold across every request a component makes, so the token bucket lives
 *   here (or in the clientset, shared by all its group clients), not in each request;
 * - a component that builds several clients from one config should not open a TLS connection
 *   per client: `transport` may be passed in and shared.
 *
 * Invariants:
 * - `versionedAPIPath` is `/api/v1` for the core group and `/apis/<group>/<version>` otherwise;
 * - a Request never outlives its client's settings: it copies the timeout it starts with.
 *
 * @upstream kubernetes/client-go rest/client.go (RESTClient, NewRESTClient, Verb, Get, Post, Put, Patch, Delete)
 * @upstream kubernetes/client-go rest/config.go (RESTClientFor, DefaultVersionedAPIPath)
 * @chapter 04-informers
 */

import type { GroupVersion } from "../../api/schema.ts";
import { realClock } from "../util/clock.ts";
import type { TokenBucket } from "../util/flowcontrol/token-bucket.ts";
import { type Config, rateLimiterFor, sleeperFor, validateConfig } from "./config.ts";
import { type ClientContent, type PatchType, Request } from "./request.ts";
import { type Transport, transportFor } from "./transport.ts";

/** `/api/v1` or `/apis/<group>/<version>` (DefaultVersionedAPIPath). */
export function versionedAPIPath(gv: GroupVersion): string {
  return gv.group === "" ? `/api/${gv.version}` : `/apis/${gv.group}/${gv.version}`;
}

// #region rest-client
export class RESTClient {
  private readonly content: ClientContent;

  constructor(
    config: Config,
    readonly groupVersion: GroupVersion,
    /** A transport to share (a clientset passes its own); absent → one made from config. */
    transport?: Transport,
  ) {
    const invalid = validateConfig(config);
    if (invalid) throw invalid;
    this.content = {
      base: new URL(config.host),
      versionedAPIPath: versionedAPIPath(groupVersion),
      group: groupVersion.group,
      transport: transport ?? transportFor(config),
      rateLimiter: rateLimiterFor(config),
      clock: config.clock ?? realClock,
      sleep: sleeperFor(config),
      timeout: config.timeout ?? 0,
      warningHandler: config.warningHandler,
    };
  }

  /** The limiter every request of this client waits on (undefined: not limited). */
  get rateLimiter(): TokenBucket | undefined {
    return this.content.rateLimiter;
  }

  verb(verb: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"): Request {
    return new Request(this.content, verb);
  }
  get(): Request {
    return this.verb("GET");
  }
  post(): Request {
    return this.verb("POST");
  }
  put(): Request {
    return this.verb("PUT");
  }
  /** A PATCH whose body is of the given patch type. */
  patch(pt: PatchType): Request {
    return this.verb("PATCH").body(undefined, pt);
  }
  delete(): Request {
    return this.verb("DELETE");
  }

  /** Closes idle kept-alive connections (e.g. at shutdown). */
  closeIdleConnections(): void {
    this.content.transport.closeIdleConnections();
  }
}
// #endregion rest-client

/** RESTClientFor: a client for one group version of the config's server. */
export function restClientFor(config: Config, gv: GroupVersion): RESTClient {
  return new RESTClient(config, gv);
}
