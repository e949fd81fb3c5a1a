/**
 * The bearer token — the request side of every token authenticator: read
 * `Authorization: Bearer <token>`, hand the token to the token authenticators, and remove the
 * header once it has proved someone. Upstream: k8s.io/apiserver
 * pkg/authentication/request/bearertoken/bearertoken.go.
 *
 * Solves: the token file and the service-account JWTs are judged on the token alone; how a token
 * travels in an HTTP request is decided once, here.
 *
 * Invariants:
 * - no `Authorization` header, another scheme (`Basic …`), or `Bearer` with nothing after it:
 *   `null` — this request presents no bearer token;
 * - the scheme is matched case-insensitively (RFC 7235: `bearer`, `BEARER`), the token exactly;
 * - the token is the second space-separated word: `Bearer  abc` (two spaces) presents an empty
 *   token, not `abc` (upstream also warns the client);
 * - a token no token authenticator accepts is an error ("invalid bearer token"), not `null`: the
 *   client *did* present a credential, so it must get a 401 — never fall through to anonymous.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/request/bearertoken/bearertoken.go (Authenticator.AuthenticateRequest)
 * @chapter 03-api-security
 */
import type { IncomingMessage } from "node:http";
import {
  AuthenticationError,
  type Authenticator,
  type AuthenticatorResponse,
  type TokenAuthenticator,
} from "./authenticator.ts";

// #region bearer-token
/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  const auth = (header ?? "").trim();
  if (auth === "") return undefined;
  const parts = auth.split(" ");
  if (parts.length < 2 || (parts[0] as string).toLowerCase() !== "bearer") return undefined;
  const token = parts[1] as string;
  return token === "" ? undefined : token;
}

export class BearerTokenAuthenticator implements Authenticator {
  /** The token authenticators, tried in order (the token file; chapter 3's service accounts). */
  constructor(private readonly tokens: readonly TokenAuthenticator[]) {}

  async authenticateRequest(req: IncomingMessage): Promise<AuthenticatorResponse | null> {
    const token = bearerToken(req.headers.authorization);
    if (token === undefined) return null;
    const errors: string[] = [];
    for (const auth of this.tokens) {
      try {
        const resp = await auth.authenticateToken(token);
        if (resp) return resp;
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    throw new AuthenticationError(errors.length > 0 ? aggregate(errors) : "invalid bearer token");
  }
}
// #endregion bearer-token

/** utilerrors.NewAggregate's text: one message alone, several in brackets. */
export function aggregate(messages: readonly string[]): string {
  return messages.length === 1 ? (messages[0] as string) : `[${messages.join(", ")}]`;
}
