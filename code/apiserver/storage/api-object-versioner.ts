/**
 * APIObjectVersioner — how an object's `resourceVersion` relates to etcd: never stored, set from
 * the key's `mod_revision` on every read, and parsed from what a client sends.
 * Upstream: k8s.io/apiserver pkg/storage/etcd3/api_object_versioner.go.
 *
 * Solves:
 * - a stored resourceVersion would be wrong the moment it was written (the write's revision is
 *   known only once etcd commits it), so the value in etcd has none, and every object read back
 *   gets the revision of its key's last write;
 * - clients send resourceVersions as strings; the store compares revisions as numbers, so a string
 *   that is not an unsigned decimal must be refused with upstream's 400, not misread.
 *
 * Invariants:
 * - `decodeObject(encodeObject(o), rev)` is `o` with `metadata.resourceVersion` = String(rev);
 * - `parseResourceVersion("")` (and undefined) is 0, meaning "no particular revision".
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/api_object_versioner.go (APIObjectVersioner: PrepareObjectForStorage, UpdateObject, ParseResourceVersion)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/decoder.go (defaultDecoder.Decode: decode, then UpdateObject with the revision)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { newBadRequest, newInternalError } from "../errors.ts";

const decoder = new TextDecoder();

// #region resource-version
/** PrepareObjectForStorage, then encode: the object as stored, without resourceVersion (etcd supplies it as mod_revision). */
export function encodeObject(obj: KubeObject): string {
  const { resourceVersion: _ignored, ...metadata } = obj.metadata ?? {};
  return JSON.stringify({ ...obj, metadata });
}

/**
 * What `decodeObject(encodeObject(obj), rev)` gives, without parsing the JSON just written: a
 * copy of `obj`'s top level and metadata with resourceVersion `rev` (last in metadata, where
 * decoding puts it). The rest is shared with `obj`, which the writer hands over. It serialises
 * to the same bytes as the decoded object (JSON drops the same undefined fields either way).
 */
export function withResourceVersion(obj: KubeObject, rev: number): KubeObject {
  const { resourceVersion: _ignored, ...metadata } = obj.metadata ?? {};
  return { ...obj, metadata: { ...metadata, resourceVersion: String(rev) } };
}

/** Decode, then UpdateObject: the stored JSON back into an object whose resourceVersion is `rev`. */
export function decodeObject(value: Uint8Array | string, rev: number): KubeObject {
  let obj: KubeObject;
  try {
    obj = JSON.parse(typeof value === "string" ? value : decoder.decode(value)) as KubeObject;
  } catch (e) {
    throw newInternalError(`unable to decode an object from etcd: ${(e as Error).message}`);
  }
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(rev) };
  return obj;
}

/**
 * APIObjectVersioner.ParseResourceVersion: "" is 0; anything else must be an unsigned decimal.
 * The message is what GetList answers with (BadRequest "invalid resource version: …").
 */
export function parseResourceVersion(rv: string | undefined): number {
  if (rv === undefined || rv === "") return 0;
  if (!/^[0-9]+$/.test(rv)) {
    throw newBadRequest(
      `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`,
    );
  }
  const n = Number(rv);
  if (!Number.isSafeInteger(n)) {
    throw newBadRequest(
      `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: value out of range`,
    );
  }
  return n;
}
// #endregion resource-version
