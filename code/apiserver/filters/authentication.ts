/**
 * WithAuthentication — the first gate: turn the request's credentials into a user, or answer 401.
 * Upstream: k8s.io/apiserver pkg/endpoints/filters/authentication.go.
 *
 * Solves:
 * - every later stage (authorization, admission, audit) judges a user, not a credential;
 * - a bad credential and a missing one look the same to the client (`401 Unauthorized`, no
 *   reason given), so a caller cannot probe which check failed.
 *
 * Invariants:
 * - no authenticator configured (the insecure port): every request is the insecure superuser;
 * - the `Authorization` header is removed once it has been read: nothing after this gate can
 *   leak or replay the token.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/authentication.go (WithAuthentication, Unauthorized)
 * @chapter 03-api-security
 */
import type { IncomingMessage } from "node:http";
import type { Authenticator } from "../authn/authenticator.ts";
import { InsecureUser, type UserInfo } from "../authn/user.ts";
import { newUnauthorized } from "../errors.ts";

// #region with-authentication
export async function authenticateRequest(
  req: IncomingMessage,
  authenticator: Authenticator | undefined,
): Promise<UserInfo> {
  if (!authenticator) return InsecureUser;
  let user: UserInfo | undefined;
  try {
    user = (await authenticator.authenticateRequest(req))?.user;
  } catch {
    // The reason goes to the server's log in upstream; the client learns only "Unauthorized".
    user = undefined;
  }
  if (!user) throw newUnauthorized();
  delete req.headers.authorization;
  return user;
}
// #endregion with-authentication
