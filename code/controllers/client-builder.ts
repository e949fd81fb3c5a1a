/**
 * Controller client builders — which credentials a controller's requests carry: the manager's
 * own (SimpleControllerClientBuilder), or, with `--use-service-account-credentials`, a
 * ServiceAccount of its own in kube-system with a token from the TokenRequest API
 * (DynamicControllerClientBuilder).
 * Upstream: kubernetes/kubernetes staging/src/k8s.io/controller-manager/pkg/clientbuilder/client_builder_dynamic.go, and the others listed below.
 *
 * Solves: under RBAC each controller gets only its own role (`system:controller:<name>`, bound
 * to `kube-system/<name>`), so a bug in one controller reaches only what that one may touch, and
 * the audit log names the controller behind every request.
 *
 * Invariants:
 * - the ServiceAccount is made if missing (the manager's role may create service accounts and
 *   their tokens, nothing else of the controllers');
 * - a controller's clientset carries the token and the cluster's CA, never the manager's client
 *   certificate; it shares the manager's rate-limit settings but not its bucket;
 * - a token lasts an hour (expirationSeconds 3600) and is renewed before it expires: it is used
 *   until 80 % of its life has passed (20 % leeway; a life under 10 minutes counts as 10, against
 *   clock skew), less the cache's 10 s, and the next request asks for a new one. A manager that
 *   runs for days keeps its controllers' access with no restart.
 * - a failed renewal keeps the old token while it lasts; the next request tries again.
 *
 * What upstream does differently: its token source retries a failed TokenRequest with backoff
 * (500 ms doubling, 4 tries) inside the request, and a 401 answer resets the cache at once
 * (ResettableTokenSourceWrapTransport); ours retries on the next request only.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/controller-manager/pkg/clientbuilder/client_builder_dynamic.go (DynamicControllerClientBuilder, tokenSourceImpl.Token, defaultExpirationSeconds, defaultLeewayPercent, getOrCreateServiceAccount)
 * @upstream kubernetes/client-go transport/token_source.go (NewCachedTokenSource, cachingTokenSource.Token)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/controller-manager/pkg/clientbuilder/client_builder.go (SimpleControllerClientBuilder)
 * @chapter 04-informers
 */
import type { ServiceAccount } from "../api/core.ts";
import { isNotFound } from "../client/errors.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import type { Config, TokenSource } from "../client/rest/config.ts";
import { type Clock, realClock } from "../client/util/clock.ts";

/** Where the controllers' accounts live (upstream's "kube-system"). */
export const controllerServiceAccountNamespace = "kube-system";
/** defaultExpirationSeconds: what each TokenRequest asks for. */
export const defaultExpirationSeconds = 3600;
/** defaultLeewayPercent: the part of a token's life left unused, so it is renewed in time. */
export const defaultLeewayPercent = 20;
/** A token said to live less than this is taken to live this long (clock skew). */
const minTokenLifetimeMs = 10 * 60_000;
/** NewCachedTokenSource's leeway: a token this close to its expiry is not used any more. */
const cacheLeewayMs = 10_000;

// #region token-expiry
/**
 * tokenSourceImpl.Token's rule: the time to stop using a token issued at `nowMs` whose
 * `status.expirationTimestamp` is `expiresAtMs`.
 */
export function tokenExpiry(
  nowMs: number,
  expiresAtMs: number,
  leewayPercent = defaultLeewayPercent,
): number {
  let lifetime = expiresAtMs - nowMs;
  if (lifetime < minTokenLifetimeMs) lifetime = minTokenLifetimeMs;
  return nowMs + lifetime - Math.floor((lifetime * leewayPercent) / 100);
}
// #endregion token-expiry

// #region cached-token-source
/** A token and when to stop using it (oauth2.Token's AccessToken and Expiry). */
export interface ExpiringToken {
  token: string;
  expiry: number;
}

/**
 * cachingTokenSource: the cached token while it is good, else one new token from `base` for all
 * the requests waiting at that moment; if `base` fails, the old token while there is one.
 */
export class CachedTokenSource implements TokenSource {
  private tok?: ExpiringToken;
  private inflight?: Promise<string>;

  constructor(
    private readonly base: () => Promise<ExpiringToken>,
    private readonly clock: Clock = realClock,
  ) {}

  token(): Promise<string> {
    if (this.tok && this.tok.expiry - cacheLeewayMs > this.clock.now())
      return Promise.resolve(this.tok.token);
    this.inflight ??= (async () => {
      try {
        this.tok = await this.base();
        return this.tok.token;
      } catch (e) {
        if (!this.tok) throw e;
        return this.tok.token; // "Unable to rotate token": the old one is still good for a while
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }
}
// #endregion cached-token-source

export interface DynamicClientBuilderOptions {
  /** The clock the tokens' expiry is read on (tests pass a FakeClock). */
  clock?: Clock;
}

// #region dynamic-client-builder
/** ClientOrDie(name) for --use-service-account-credentials: a clientset acting as kube-system/<name>. */
export function dynamicControllerClientBuilder(
  root: Clientset,
  rootConfig: Config,
  opts: DynamicClientBuilderOptions = {},
) {
  const clock = opts.clock ?? realClock;
  const made = new Map<string, Promise<Clientset>>();
  const accounts = root.coreV1.serviceAccounts(controllerServiceAccountNamespace);

  async function getOrCreateServiceAccount(name: string): Promise<void> {
    try {
      await accounts.get(name);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      const sa: ServiceAccount = {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name, namespace: controllerServiceAccountNamespace },
      };
      await accounts.create(sa).catch((err) => {
        if ((err as { code?: number }).code !== 409) throw err;
      });
    }
  }

  /** tokenSourceImpl.Token: the account made if missing, a TokenRequest, its expiry by the rule. */
  async function requestToken(name: string): Promise<ExpiringToken> {
    await getOrCreateServiceAccount(name);
    const tr = await accounts.createSubresource<{ status: { token: string; expirationTimestamp: string } }>(
      name,
      "token",
      {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: defaultExpirationSeconds },
      },
    );
    const now = clock.now();
    // The server's answer says how long it really lasts (it may shorten what was asked).
    const expiresAt = Date.parse(tr.status.expirationTimestamp);
    return {
      token: tr.status.token,
      expiry: tokenExpiry(now, Number.isNaN(expiresAt) ? now + defaultExpirationSeconds * 1000 : expiresAt),
    };
  }

  return (name: string): Promise<Clientset> => {
    let c = made.get(name);
    if (!c) {
      c = (async () => {
        const tokenSource = new CachedTokenSource(() => requestToken(name), clock);
        await tokenSource.token(); // the first token now: a start that cannot get one fails here
        const tls = rootConfig.tlsClientConfig;
        return newForConfig({
          ...rootConfig,
          bearerToken: undefined,
          bearerTokenFile: undefined,
          tokenSource,
          rateLimiter: undefined,
          // The CA stays; the manager's own client certificate must not go with the token.
          tlsClientConfig: tls && {
            insecure: tls.insecure,
            serverName: tls.serverName,
            caData: tls.caData,
            caFile: tls.caFile,
          },
        });
      })();
      made.set(name, c);
    }
    return c;
  };
}
// #endregion dynamic-client-builder
