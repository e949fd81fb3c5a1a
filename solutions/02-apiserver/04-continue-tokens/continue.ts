// The reference answer, written out in the steps README.md names. The API server's own paged
// lists do the same in the course's code — encodeContinue and decodeContinue in
// code/apiserver/storage/continue.ts, Etcd3Store.getList in code/apiserver/storage/etcd3-store.ts
// (regions get-list and list-revision) — and the tests check this answer's tokens against theirs.
//
// Each decision the README asks for is one named step in `reference`; `continueTokens` puts the
// steps together into the three functions. A recorded mistake next to this file (wrong-*.ts) is
// this answer with one step done wrong: it builds the functions from `{ ...reference, <step> }`.
import { posix } from "node:path";
import { newBadRequest, newResourceExpired } from "../../../code/apiserver/errors.ts";
import {
  ErrEmptyStartKey,
  ErrGenericInvalidKey,
  ErrInvalidStartRV,
  ErrUnrecognizedEncodedVersion,
} from "../../../code/apiserver/storage/continue.ts";
import { inconsistentContinue } from "../../../code/apiserver/storage/errors.ts";
import { type EtcdClient, isCompactedError } from "../../../code/apiserver/storage/etcd-client.ts";
import { decodeObject, prefixRangeEnd } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { ListResult } from "../../../code/apiserver/storage/interfaces.ts";
import type { RangeResponse } from "../../../code/store/etcdserverpb/rpc.ts";

// Upstream's messages, word for word: one copy, in the course's code.
export { ErrEmptyStartKey, ErrGenericInvalidKey, ErrInvalidStartRV, ErrUnrecognizedEncodedVersion };

/** The decisions a continue token and a page reader are made of — each one a place to go wrong. */
export interface ContinueSteps {
  /** The token's text for its JSON. */
  tokenText(json: string): string;
  /** The token's `start` for the key the next page starts at. */
  startOf(key: string, keyPrefix: string): string;
  /** The key a decoded `start` names — or why it is refused. */
  keyOf(start: string, keyPrefix: string): { key: string } | { error: string };
  /** The key the next page starts at, after a page that ended at `lastKey`. */
  nextStart(lastKey: string): string;
  /** The revision a page was read at: `tokenRv` (0 for a read at the newest) and etcd's answer. */
  listRevision(tokenRv: number, resp: RangeResponse): number;
  /** The revision in the fresh token of a 410, for a token whose revision `rv` was compacted. */
  revisionAfterCompaction(rv: number): number;
}

export const reference: ContinueSteps = {
  // Go's base64.RawURLEncoding: the URL-safe alphabet, no "=" padding — what Buffer calls base64url.
  tokenText: (json) => Buffer.from(json, "utf8").toString("base64url"),

  // Relative to the list's prefix: the token cannot name a key of another resource.
  startOf: (key, keyPrefix) => key.slice(keyPrefix.length),

  // path.Clean must leave the start as it is ("/" in front of it): no "..", ".", "//" or trailing "/".
  // What is left is put back under the prefix, whatever it names.
  keyOf(start, keyPrefix) {
    const path = start.startsWith("/") ? start : `/${start}`;
    const clean = posix.normalize(path) === path && (path === "/" || !path.endsWith("/"));
    if (!clean) return { error: `${ErrGenericInvalidKey}: ${start}` };
    return { key: keyPrefix + path.slice(1) };
  },

  // lastKey + "\x00" is the smallest key greater than lastKey: the page after starts right after it.
  nextStart: (lastKey) => `${lastKey}\x00`,

  // header.revision is etcd's newest revision even for a read at an older one: only a read at
  // the newest takes it.
  listRevision: (tokenRv, resp) => (tokenRv > 0 ? tokenRv : resp.header.revision),

  // -1: "go on at the newest revision"; the compacted one can never be read again.
  revisionAfterCompaction: () => -1,
};

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** The exercise's three functions, made of `step`. */
export function continueTokens(step: ContinueSteps) {
  function encodeContinue(key: string, keyPrefix: string, rv: number): string {
    if (!key.startsWith(keyPrefix)) {
      throw new Error("unable to encode next field: the key and key prefix do not match");
    }
    // The fields in upstream's order: JSON.stringify keeps an object's insertion order.
    return step.tokenText(JSON.stringify({ v: "meta.k8s.io/v1", rv, start: step.startOf(key, keyPrefix) }));
  }

  function decodeContinue(token: string, keyPrefix: string): { key: string; rv: number } | { error: string } {
    // Buffer skips characters that are not base64url; Go refuses them.
    if (!/^[A-Za-z0-9_-]*$/.test(token)) return { error: `${ErrGenericInvalidKey}: illegal base64 data` };
    let fields: { v?: unknown; rv?: unknown; start?: unknown };
    try {
      fields = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) ?? {};
    } catch (e) {
      return { error: `${ErrGenericInvalidKey}: ${(e as Error).message}` };
    }
    const { v, rv, start } = fields;
    if (v !== "meta.k8s.io/v1") return { error: `${ErrUnrecognizedEncodedVersion} ${String(v ?? "")}` };
    if (typeof rv !== "number" || !Number.isInteger(rv) || rv === 0) return { error: ErrInvalidStartRV };
    if (typeof start !== "string" || start === "") return { error: ErrEmptyStartKey };
    const named = step.keyOf(start, keyPrefix);
    return "error" in named ? named : { key: named.key, rv };
  }

  async function listPage(
    client: EtcdClient,
    keyPrefix: string,
    opts: { limit: number; continue?: string },
  ): Promise<ListResult> {
    let startKey = keyPrefix;
    let tokenRv = 0; // 0: read at the newest revision
    if (opts.continue) {
      const decoded = decodeContinue(opts.continue, keyPrefix);
      if ("error" in decoded) throw newBadRequest(`invalid continue token: ${decoded.error}`);
      startKey = decoded.key;
      if (decoded.rv > 0) tokenRv = decoded.rv;
    }
    let resp: RangeResponse;
    try {
      resp = await client.range({
        key: bytes(startKey),
        rangeEnd: prefixRangeEnd(bytes(keyPrefix)),
        limit: opts.limit,
        revision: tokenRv,
      });
    } catch (e) {
      if (!opts.continue || !isCompactedError(e)) throw e;
      const expired = newResourceExpired(inconsistentContinue);
      const rv = step.revisionAfterCompaction(tokenRv);
      expired.status.metadata = { continue: encodeContinue(startKey, keyPrefix, rv) };
      throw expired;
    }
    const rv = step.listRevision(tokenRv, resp);
    const page: ListResult = {
      items: resp.kvs.map((kv) => decodeObject(kv.value, kv.modRevision)),
      resourceVersion: String(rv),
    };
    if (resp.more) {
      const lastKey = text(resp.kvs[resp.kvs.length - 1].key);
      page.continue = encodeContinue(step.nextStart(lastKey), keyPrefix, rv);
    }
    return page;
  }

  return { encodeContinue, decodeContinue, listPage };
}

export const { encodeContinue, decodeContinue, listPage } = continueTokens(reference);
