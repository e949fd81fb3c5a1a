/**
 * Authenticator — one way of proving who you are (a client certificate, a bearer token, a
 * service-account JWT). Upstream: k8s.io/apiserver pkg/authentication/authenticator/interfaces.go.
 *
 * Solves: the API server accepts several kinds of credentials at once; each authenticator
 * answers one of three things about a request, and a union tries them in order.
 *
 * Invariants (the three answers):
 * - `null`: "not mine" — the request carries no credential of this kind; try the next one;
 * - a response: the credential is valid, this is the user;
 * - a thrown error: the credential is of this kind and is bad (expired, wrong signature). The
 *   request fails with 401 unless a later authenticator accepts it; the client is never told
 *   which check failed.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/authenticator/interfaces.go (Request, Response)
 * @chapter 03-api-security
 */
import type { IncomingMessage } from "node:http";
import type { UserInfo } from "./user.ts";

// #region authenticator
export interface AuthenticatorResponse {
  user: UserInfo;
  /** The audiences the credential was valid for (service-account tokens), if it names any. */
  audiences?: string[];
}

export interface Authenticator {
  authenticateRequest(req: IncomingMessage): Promise<AuthenticatorResponse | null>;
}
// #endregion authenticator

/**
 * Why a credential was refused: for the server's log, never for the client (who gets a bare 401).
 * The message is upstream's where it has one (`x509: certificate has expired or is not yet valid`).
 */
export class AuthenticationError extends Error {
  override readonly name = "AuthenticationError";
}

// #region token-authenticator
/**
 * authenticator.Token: judges a bearer token alone, with the same three answers. The request
 * side (the `Authorization: Bearer` header) is bearertoken.ts's; the token file and the
 * service-account tokens are TokenAuthenticators behind it (chapter 3: serving).
 */
export interface TokenAuthenticator {
  authenticateToken(token: string): Promise<AuthenticatorResponse | null>;
}
// #endregion token-authenticator
