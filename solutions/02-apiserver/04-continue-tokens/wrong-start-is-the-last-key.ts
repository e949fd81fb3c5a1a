// Mistake: the next page starts at the last key sent instead of just after it — every page begins with the last object of the page before, listed twice.
import { posix } from "node:path";
import { newBadRequest, newResourceExpired } from "../../../code/apiserver/errors.ts";
import { inconsistentContinue } from "../../../code/apiserver/storage/errors.ts";
import { type EtcdClient, isCompactedError } from "../../../code/apiserver/storage/etcd-client.ts";
import { decodeObject, prefixRangeEnd } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { ListResult } from "../../../code/apiserver/storage/interfaces.ts";
import type { RangeResponse } from "../../../code/store/rpc.ts";

export const ErrInvalidStartRV =
  "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)";
export const ErrEmptyStartKey = "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)";
export const ErrGenericInvalidKey = "continue key is not valid";
export const ErrUnrecognizedEncodedVersion =
  "continue key is not valid: server does not recognize this encoded version";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

export function encodeContinue(key: string, keyPrefix: string, rv: number): string {
  if (!key.startsWith(keyPrefix))
    throw new Error("unable to encode next field: the key and key prefix do not match");
  return Buffer.from(
    JSON.stringify({ v: "meta.k8s.io/v1", rv, start: key.slice(keyPrefix.length) }),
  ).toString("base64url");
}

export function decodeContinue(
  token: string,
  keyPrefix: string,
): { key: string; rv: number } | { error: string } {
  if (!/^[A-Za-z0-9_-]*$/.test(token)) return { error: `${ErrGenericInvalidKey}: illegal base64 data` };
  let c: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    c = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) ?? {};
  } catch (e) {
    return { error: `${ErrGenericInvalidKey}: ${(e as Error).message}` };
  }
  if (c.v !== "meta.k8s.io/v1") return { error: `${ErrUnrecognizedEncodedVersion} ${String(c.v ?? "")}` };
  if (typeof c.rv !== "number" || c.rv === 0) return { error: ErrInvalidStartRV };
  if (typeof c.start !== "string" || c.start === "") return { error: ErrEmptyStartKey };
  const key = c.start.startsWith("/") ? c.start : `/${c.start}`;
  if (posix.normalize(key) !== key || (key.length > 1 && key.endsWith("/"))) {
    return { error: `${ErrGenericInvalidKey}: ${c.start}` };
  }
  return { key: keyPrefix + key.slice(1), rv: c.rv };
}

export async function listPage(
  client: EtcdClient,
  keyPrefix: string,
  opts: { limit: number; continue?: string },
): Promise<ListResult> {
  let startKey = keyPrefix;
  let rev = 0;
  if (opts.continue) {
    const decoded = decodeContinue(opts.continue, keyPrefix);
    if ("error" in decoded) throw newBadRequest(`invalid continue token: ${decoded.error}`);
    startKey = decoded.key;
    if (decoded.rv > 0) rev = decoded.rv;
  }
  let resp: RangeResponse;
  try {
    resp = await client.range({
      key: bytes(startKey),
      rangeEnd: prefixRangeEnd(bytes(keyPrefix)),
      limit: opts.limit,
      revision: rev,
    });
  } catch (e) {
    if (!isCompactedError(e) || !opts.continue) throw e;
    const err = newResourceExpired(inconsistentContinue);
    err.status.metadata = { continue: encodeContinue(startKey, keyPrefix, -1) };
    throw err;
  }
  const items = resp.kvs.map((kv) => decodeObject(kv.value, kv.modRevision));
  const listRev = rev || resp.header.revision;
  const result: ListResult = { items, resourceVersion: String(listRev) };
  if (resp.more) {
    const lastKey = text(resp.kvs[resp.kvs.length - 1].key);
    // The mistake: the last key itself, not the smallest key after it (lastKey + "\x00").
    result.continue = encodeContinue(lastKey, keyPrefix, listRev);
  }
  return result;
}
