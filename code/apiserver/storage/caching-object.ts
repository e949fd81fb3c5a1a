/**
 * CachingObject — a watch event's object, shared read-only by every watcher, that remembers each
 * way it has been encoded so the encoding is done once per event instead of once per watcher.
 * Upstream: k8s.io/apiserver/pkg/storage/cacher/caching_object.go (all the upstream files are listed at the end of this header).
 *
 * Solves:
 * - watch fan-out that costs O(watchers) serialisations per write: a pod change seen by 1,000
 *   watchers used to be deep-copied and `JSON.stringify`-ed 1,000 times on the thread that also
 *   answers writes. Now the first watcher to send it encodes the line
 *   `{"type":…,"object":…}\n` to UTF-8 bytes, and every other watcher with the same output shape
 *   (same type, same kind/apiVersion) sends those same bytes;
 * - no copy per watcher: watchers hand the cached object itself to the handler, so nothing may
 *   change it — it is deep-frozen when the watch cache takes it in, and a stray write throws
 *   (ES modules are strict) instead of corrupting what every other watcher and the cache see.
 *
 * Invariants:
 * - the object is frozen before the first encoding is cached, so a cached line can never
 *   disagree with the object;
 * - a line is keyed by the event type and an encoder id that names everything else the output
 *   depends on (here: the apiVersion and kind stamped on it); callers whose output depends on
 *   the request (Table rows, their ages) must not use the cache.
 *
 * What upstream does differently: cachingObject wraps a runtime.Object and caches per
 * runtime.Identifier (JSON, protobuf, CBOR, each group-version); the watch encoder still writes
 * the frame itself. Here the cache holds the whole newline-terminated event line, as bytes ready
 * for the socket, since that is all our watch handler writes.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/caching_object.go (cachingObject, newCachingObject, CacheEncode, GetObject)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (setCachingObjects: the previous object stamped with the event's resourceVersion)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";

// #region caching-object
export class CachingObject {
  private readonly lines = new Map<string, Buffer>();
  private lastType = "";
  private lastEncoderId = "";
  private lastLine?: Buffer;

  /** Freezes `object` (deeply): from now on it is shared, never copied, never changed. */
  constructor(readonly object: KubeObject) {
    deepFreeze(object);
  }

  /**
   * CacheEncode: the watch line for `type`, as the UTF-8 bytes a socket sends, encoded by
   * `encode` the first time this (type, encoder) pair is asked for, and the same bytes every time
   * after — so the JSON and its UTF-8 conversion are both done once, not once per watcher.
   */
  watchLine(type: string, encoderId: string, encode: (object: KubeObject) => unknown): Buffer {
    // A thousand watchers in a row ask for the same line: answer them without building a key.
    if (this.lastLine && type === this.lastType && encoderId === this.lastEncoderId) return this.lastLine;
    const key = `${type}\u0000${encoderId}`;
    let line = this.lines.get(key);
    if (line === undefined) {
      line = Buffer.from(`${JSON.stringify({ type, object: encode(this.object) })}\n`);
      this.lines.set(key, line);
    }
    this.lastType = type;
    this.lastEncoderId = encoderId;
    this.lastLine = line;
    return line;
  }
}

const byObject = new WeakMap<KubeObject, CachingObject>();

/**
 * The one CachingObject of an object the watch cache holds: every event and every initial
 * ADDED that carries this object shares its cached lines. The object is frozen by the first call.
 */
export function cachingObjectFor(object: KubeObject): CachingObject {
  let c = byObject.get(object);
  if (!c) {
    c = new CachingObject(object);
    byObject.set(object, c);
  }
  return c;
}
// #endregion caching-object

/** Object.freeze all the way down (objects decoded from JSON: no cycles). */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value as object)) deepFreeze(v);
  return value;
}
