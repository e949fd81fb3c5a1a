/**
 * Bytes — keys and values are byte strings, ordered byte by byte.
 *
 * Solves:
 * - etcd keys are arbitrary bytes (`/registry/pods/default/web-0`, but also `\xff\x00`), ordered as
 *   Go's `bytes.Compare` orders them; a JS string comparison would order UTF-16 code units instead
 *   and put some keys in the wrong place;
 * - JS `Map` cannot use a `Uint8Array` as a key by value, so maps keyed by etcd keys need a
 *   lossless string form of the bytes.
 *
 * Invariants:
 * - `compareBytes` is a total order equal to Go's `bytes.Compare`: the first differing byte
 *   decides, and a proper prefix sorts first.
 * - `mapKey(a) === mapKey(b)` exactly when `a` and `b` hold the same bytes.
 *
 * @upstream none — Go's standard library provides bytes.Compare and bytes.Equal
 * @chapter 01-etcd-watch
 */
import { Buffer } from "node:buffer";

// #region compare-bytes
/** Byte-wise lexicographic order: negative if a < b, 0 if equal, positive if a > b. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i] !== b[i]) return a[i] - b[i];
  }
  return a.length - b.length;
}
// #endregion compare-bytes

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return compareBytes(a, b) === 0;
}

/**
 * A string that stands for these exact bytes, for use as a `Map` key. Latin-1 maps each byte to
 * one character 0–255, so no two byte strings share a map key (UTF-8 decoding would merge
 * invalid sequences into U+FFFD).
 */
export function mapKey(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("latin1");
}

/** The inverse of `mapKey`. */
export function fromMapKey(s: string): Uint8Array {
  return new Uint8Array(Buffer.from(s, "latin1"));
}

/** UTF-8 bytes of a string: how `etcdctl put foo bar` sends "foo". */
export function toBytes(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

/** The UTF-8 text of some bytes (for printing; keys need not be valid UTF-8). */
export function toText(b: Uint8Array): string {
  return new TextDecoder().decode(b);
}

/** A private copy, so a caller who reuses its buffer cannot change what the store holds. */
export function copyBytes(b: Uint8Array): Uint8Array {
  return new Uint8Array(b);
}
