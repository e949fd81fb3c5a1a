/**
 * The authentication config — from the server's options to the one Authenticator the
 * authentication filter asks: which authenticators, in which order, and what wraps them.
 * Upstream: kubernetes/kubernetes pkg/kubeapiserver/authenticator/config.go (Config.New).
 *
 * Solves: each authenticator knows one kind of credential; the order and the wrapping decide the
 * behaviour a client sees, and they live here, in one list a reader can check:
 *
 * 1. the request authenticators, in upstream's order: x509 client certificates, then bearer
 *    tokens (one BearerTokenAuthenticator over every token authenticator: the token file, then
 *    — chapter 3, service accounts — the service-account JWTs);
 * 2. their union, asked in that order (union.ts): the first that knows the user wins;
 * 3. the group adder around the union: every user found gets `system:authenticated`;
 * 4. with `--anonymous-auth`, anonymous behind a fail-on-error union: "no credential" is
 *    `system:anonymous`, a bad credential stays a 401.
 *
 * Invariants:
 * - a file that cannot be read or parsed stops the server from starting (an error naming the
 *   flag and the file), as upstream's does: a server that silently lost its users is worse;
 * - with no authenticator configured and anonymous off, every request on the secure port is a
 *   401 (upstream would skip authentication altogether).
 *
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/authenticator/config.go (Config.New: the order, the group adder, anonymous with NewFailOnError)
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/options/authentication.go (--client-ca-file, --token-auth-file, --anonymous-auth)
 * @chapter 03-api-security
 */
import { readFile } from "node:fs/promises";
import type { Store } from "../registry/store.ts";
import { AnonymousAuthenticator } from "./anonymous.ts";
import type { Authenticator, TokenAuthenticator } from "./authenticator.ts";
import { BearerTokenAuthenticator } from "./bearertoken.ts";
import { AuthenticatedGroupAdder } from "./group-adder.ts";
import { registryTokenGetter } from "./serviceaccount/getter.ts";
import {
  newServiceAccountAuthenticator,
  type ServiceAccountAuthenticatorOptions,
} from "./serviceaccount/jwt.ts";
import { TokenFileAuthenticator } from "./tokenfile.ts";
import { UnionAuthenticator } from "./union.ts";
import { parseCertificateBundle, X509Authenticator } from "./x509.ts";

/** The authentication flags of kube-apiserver, as options. */
export interface AuthenticationOptions {
  /** `--client-ca-file`: PEM CA certificates; a client certificate one of them signed is a user. */
  clientCAFile?: string;
  /** `--token-auth-file`: the static tokens' CSV file. */
  tokenAuthFile?: string;
  /** `--anonymous-auth` (default true): a request with no credential is `system:anonymous`. */
  anonymousAuth?: boolean;
  /**
   * The service-account token flags (`--service-account-key-file`, `--service-account-issuer`,
   * `--api-audiences`; serviceaccount/options.ts); absent: no service-account tokens.
   */
  serviceAccounts?: Omit<ServiceAccountAuthenticatorOptions, "getter">;
}

/** Why the authentication options cannot be used; the message names the flag and the file. */
export class AuthenticationConfigError extends Error {
  override readonly name = "AuthenticationConfigError";
}

// #region new-authenticator
export async function newAuthenticator(
  opts: AuthenticationOptions,
  stores?: ReadonlyMap<string, Store>,
): Promise<Authenticator> {
  const authenticators: Authenticator[] = [];
  const tokenAuthenticators: TokenAuthenticator[] = [];

  // 1. x509 client certificates.
  if (opts.clientCAFile) authenticators.push(new X509Authenticator(await loadClientCAs(opts.clientCAFile)));

  // 2. Bearer tokens: the token file first, then (chapter 3, service accounts) the JWTs.
  if (opts.tokenAuthFile) {
    try {
      tokenAuthenticators.push(await TokenFileAuthenticator.fromFile(opts.tokenAuthFile));
    } catch (e) {
      throw new AuthenticationConfigError(
        `invalid --token-auth-file "${opts.tokenAuthFile}": ${(e as Error).message}`,
      );
    }
  }
  // A service-account token is checked against its live ServiceAccount: it needs the stores.
  if (opts.serviceAccounts && stores) {
    tokenAuthenticators.push(
      newServiceAccountAuthenticator({ ...opts.serviceAccounts, getter: registryTokenGetter(stores) }),
    );
  }
  if (tokenAuthenticators.length > 0) authenticators.push(new BearerTokenAuthenticator(tokenAuthenticators));

  const anonymous = opts.anonymousAuth ?? true;
  if (authenticators.length === 0) {
    return anonymous ? new AnonymousAuthenticator() : new UnionAuthenticator([]);
  }
  // 3. The union, and system:authenticated for whoever it found.
  const authenticated = new AuthenticatedGroupAdder(new UnionAuthenticator(authenticators));
  // 4. Anonymous only when no one found anyone and no one found a bad credential.
  return anonymous
    ? new UnionAuthenticator([authenticated, new AnonymousAuthenticator()], true)
    : authenticated;
}
// #endregion new-authenticator

async function loadClientCAs(path: string) {
  let pem: string;
  try {
    pem = await readFile(path, "utf8");
  } catch (e) {
    throw new AuthenticationConfigError(`invalid --client-ca-file "${path}": ${(e as Error).message}`);
  }
  let cas: ReturnType<typeof parseCertificateBundle>;
  try {
    cas = parseCertificateBundle(pem);
  } catch (e) {
    throw new AuthenticationConfigError(`invalid --client-ca-file "${path}": ${(e as Error).message}`);
  }
  if (cas.length === 0) {
    throw new AuthenticationConfigError(
      `invalid --client-ca-file "${path}": data does not contain any valid RSA or ECDSA certificates`,
    );
  }
  return cas;
}
