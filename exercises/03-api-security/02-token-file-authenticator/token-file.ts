/**
 * Exercise: the token-file authenticator — read upstream's `--token-auth-file` and judge a bearer
 * token against it. README.md has the rules.
 *
 * The file is CSV, one user per line: `token,user,uid` and optionally a 4th column of groups,
 * quoted because it holds commas: `abc123,bob,1002,"dev,ops"`.
 *
 * Types you will use: `UserInfo` (code/apiserver/authn/user.ts) and `AuthenticatorResponse`
 * (code/apiserver/authn/authenticator.ts): `{ user }`.
 */
import type { AuthenticatorResponse } from "../../../code/apiserver/authn/authenticator.ts";
import type { UserInfo } from "../../../code/apiserver/authn/user.ts";

/** The token → user table of a token file's text; throws for a line with fewer than 3 columns. */
export function parseTokenFile(text: string): Map<string, UserInfo> {
  throw new Error(`not implemented: parseTokenFile (${text.length} characters)`);
}

/**
 * Judges the request's `Authorization` header: `null` if it presents no bearer token, the user if
 * the token is in `tokens`, and a thrown error if it presents a token that is not.
 */
export function authenticateBearer(
  header: string | undefined,
  tokens: ReadonlyMap<string, UserInfo>,
): AuthenticatorResponse | null {
  throw new Error(`not implemented: authenticateBearer (${header}, ${tokens.size} tokens)`);
}
