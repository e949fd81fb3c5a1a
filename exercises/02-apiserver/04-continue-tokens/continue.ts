/**
 * Exercise: continue tokens — paged lists that read one snapshot across stateless requests.
 *
 * `GET /api/v1/pods?limit=500` answers the first 500 pods and a `continue` token; the next
 * request sends the token back and gets the next 500 — read at the same etcd revision as the
 * first page, from the key right after the last one sent. The server keeps nothing between the
 * two: the token carries the revision and the key. README.md has the rules.
 *
 * Helpers you may import:
 * - from code/apiserver/storage/etcd3-store.ts: `prefixRangeEnd(bytes)` (the end of a prefix
 *   range); from code/apiserver/storage/api-object-versioner.ts: `decodeObject(value, rev)` (a
 *   stored value as an object at resourceVersion rev);
 * - from code/apiserver/storage/etcd-client.ts: `isCompactedError(e)`;
 * - from code/apiserver/storage/errors.ts: `inconsistentContinue` (the 410's message);
 * - from code/apiserver/errors.ts: `newBadRequest(message)`, `newResourceExpired(message)`;
 * - `posix.normalize` from node:path cleans a path (as Go's path.Clean, but it keeps a trailing "/").
 */
import type { EtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import type { ListResult } from "../../../code/apiserver/storage/interfaces.ts";

export const ErrInvalidStartRV =
  "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)";
export const ErrEmptyStartKey = "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)";
export const ErrGenericInvalidKey = "continue key is not valid";
export const ErrUnrecognizedEncodedVersion =
  "continue key is not valid: server does not recognize this encoded version";

/** The token for a next page that starts at `key` (a key under `keyPrefix`), read at revision `rv`. */
export function encodeContinue(key: string, keyPrefix: string, rv: number): string {
  throw new Error(
    `TODO: encodeContinue — a token for ${JSON.stringify(key.slice(keyPrefix.length))} at revision ${rv}`,
  );
}

/** The full key and the revision a token names — or why it is not a valid token (upstream's words). */
export function decodeContinue(
  token: string,
  keyPrefix: string,
): { key: string; rv: number } | { error: string } {
  throw new Error(
    `TODO: decodeContinue — which key under ${keyPrefix}, and which revision, does ${token} name?`,
  );
}

/**
 * One page of the objects under `keyPrefix` (which ends in "/"): at most `limit` of them, from
 * the token's key at the token's revision, or — without a token — from the start at the newest.
 */
export async function listPage(
  client: EtcdClient,
  keyPrefix: string,
  opts: { limit: number; continue?: string },
): Promise<ListResult> {
  throw new Error(
    `TODO: listPage — ${opts.limit} objects under ${keyPrefix}${opts.continue ? ", continuing" : ""}, read with ${client.constructor.name}`,
  );
}
