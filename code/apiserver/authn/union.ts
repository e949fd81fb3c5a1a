/**
 * The union — several authenticators asked in order; the first that knows the user answers.
 * Upstream: k8s.io/apiserver pkg/authentication/request/union/union.go.
 *
 * Solves: a request carries one kind of credential, but the server accepts many (certificates,
 * tokens, service-account JWTs); the union lets each authenticator look for its own kind and
 * keeps the verdict in one place.
 *
 * Invariants:
 * - the first user found wins; later authenticators are not asked;
 * - `failOnError` false (`New`): an authenticator's error is kept and the next one is asked —
 *   a certificate from another CA does not stop a valid token on the same request; if no one
 *   accepts, the errors, aggregated, are thrown (so the request is a 401 with a reason to log);
 * - `failOnError` true (`NewFailOnError`): the first error is thrown at once. config.ts puts
 *   anonymous behind such a union, so a bad credential is a 401, never "anonymous";
 * - everyone says "not mine": `null`.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/request/union/union.go (New, NewFailOnError, unionAuthRequestHandler.AuthenticateRequest)
 * @chapter 03-api-security
 */
import type { IncomingMessage } from "node:http";
import { AuthenticationError, type Authenticator, type AuthenticatorResponse } from "./authenticator.ts";
import { aggregate } from "./bearertoken.ts";

// #region union
export class UnionAuthenticator implements Authenticator {
  constructor(
    private readonly handlers: readonly Authenticator[],
    private readonly failOnError = false,
  ) {}

  async authenticateRequest(req: IncomingMessage): Promise<AuthenticatorResponse | null> {
    const errors: string[] = [];
    for (const handler of this.handlers) {
      let resp: AuthenticatorResponse | null;
      try {
        resp = await handler.authenticateRequest(req);
      } catch (e) {
        if (this.failOnError) throw e;
        errors.push((e as Error).message);
        continue;
      }
      if (resp) return resp;
    }
    if (errors.length > 0) throw new AuthenticationError(aggregate(errors));
    return null;
  }
}
// #endregion union
