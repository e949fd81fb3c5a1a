/**
 * Continue tokens — where a paged list's next page starts, and at which revision.
 * The revision makes every page of one list (`?limit=500`) a read of the same snapshot.
 * Upstream: k8s.io/apiserver pkg/storage/continue.go.
 *
 * Solves:
 * - a client lists 10 000 pods in pages without the server keeping any state between requests:
 *   the token carries the key to start from and the revision the first page was read at;
 * - a client must not be able to read outside the resource with a forged token: the start key
 *   is cleaned like a path and put back under the list's prefix.
 *
 * Invariants:
 * - a token is base64url (no padding) of `{"v":"meta.k8s.io/v1","rv":N,"start":"<key suffix>"}`,
 *   byte-compatible with kube-apiserver's, so a token from one works on the other;
 * - `rv` is never 0 in a valid token; -1 means "continue at the newest revision" (what the
 *   server hands out after the original revision was compacted).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/continue.go (continueToken, EncodeContinue, DecodeContinue, ErrInvalidStartRV, ErrEmptyStartKey, ErrGenericInvalidKey, ErrUnrecognizedEncodedVersion)
 * @chapter 02-apiserver
 */
import { posix } from "node:path";

export const ErrInvalidStartRV =
  "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)";
export const ErrEmptyStartKey = "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)";
export const ErrGenericInvalidKey = "continue key is not valid";
export const ErrUnrecognizedEncodedVersion =
  "continue key is not valid: server does not recognize this encoded version";

// #region encode-continue
/** The token for a next page that starts at `key` (under `keyPrefix`), read at revision `rv`. */
export function encodeContinue(key: string, keyPrefix: string, rv: number): string {
  if (!key.startsWith(keyPrefix)) {
    throw new Error("unable to encode next field: the key and key prefix do not match");
  }
  const token = { v: "meta.k8s.io/v1", rv, start: key.slice(keyPrefix.length) };
  return Buffer.from(JSON.stringify(token)).toString("base64url");
}
// #endregion encode-continue

// #region decode-continue
/** The full key and revision a token names, or the reason it is not a valid token. */
export function decodeContinue(
  token: string,
  keyPrefix: string,
): { key: string; rv: number } | { error: string } {
  if (!/^[A-Za-z0-9_-]*$/.test(token)) {
    return { error: `${ErrGenericInvalidKey}: illegal base64 data` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch (e) {
    return { error: `${ErrGenericInvalidKey}: ${(e as Error).message}` };
  }
  const c = (parsed ?? {}) as { v?: unknown; rv?: unknown; start?: unknown };
  if (c.v !== "meta.k8s.io/v1") return { error: `${ErrUnrecognizedEncodedVersion} ${String(c.v ?? "")}` };
  if (typeof c.rv !== "number" || !Number.isInteger(c.rv) || c.rv === 0) return { error: ErrInvalidStartRV };
  if (typeof c.start !== "string" || c.start === "") return { error: ErrEmptyStartKey };
  // A start key such as "../secrets/x" would leave the prefix: refuse anything path.Clean changes.
  const key = c.start.startsWith("/") ? c.start : `/${c.start}`;
  if (posix.normalize(key) !== key || (key.length > 1 && key.endsWith("/"))) {
    return { error: `${ErrGenericInvalidKey}: ${c.start}` };
  }
  return { key: keyPrefix + key.slice(1), rv: c.rv };
}
// #endregion decode-continue
