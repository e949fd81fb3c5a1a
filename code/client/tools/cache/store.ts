/**
 * Store — a keyed collection of API objects, and the key functions that name them (`ns/name`).
 * Mirrors kubernetes/client-go tools/cache/store.go (Store, KeyFunc, MetaNamespaceKeyFunc,
 * SplitMetaNamespaceKey, ExplicitKey); the Store over a ThreadSafeStore is in cache.ts.
 *
 * Solves:
 * - every layer of the informer pipeline (the DeltaFIFO, the indexer, the listers, a controller's
 *   workqueue) must agree on one name for an object; the key is that name, and a controller that
 *   pops `default/web` from its queue finds the object under the same string in the cache.
 *
 * Invariants:
 * - a key is `namespace/name` for a namespaced object and `name` for a cluster-scoped one;
 *   `splitMetaNamespaceKey` inverts it;
 * - a key function is deterministic: the same object always gets the same key.
 *
 * @upstream kubernetes/client-go tools/cache/store.go (Store, KeyFunc, KeyError, ExplicitKey, MetaNamespaceKeyFunc, SplitMetaNamespaceKey)
 * @chapter 04-informers
 */

import type { KubeObject } from "../../../api/meta.ts";

// #region store-interface
/** What a reflector writes into and a lister reads from (cache.Store). */
export interface Store<T = KubeObject> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  list(): T[];
  listKeys(): string[];
  get(obj: T): T | undefined;
  getByKey(key: string): T | undefined;
  /** Swaps the whole content for `list` (a relist); `resourceVersion` is the list's. */
  replace(list: T[], resourceVersion: string): void;
  /** Meaningless for a plain store; the DeltaFIFO queues a Sync for every known object. */
  resync(): void;
}
// #endregion store-interface

/** Names an object; throws KeyError when it cannot (cache.KeyFunc). */
export type KeyFunc<T = unknown> = (obj: T) => string;

/** An object the store could not name (cache.KeyError). */
export class KeyError extends Error {
  constructor(
    readonly obj: unknown,
    override readonly cause: unknown,
  ) {
    super(`couldn't create key for object ${JSON.stringify(obj)?.slice(0, 200)}: ${String(cause)}`);
    this.name = "KeyError";
  }
}

/** A key passed where an object is expected: the key func hands it back as is (cache.ExplicitKey). */
export class ExplicitKey {
  constructor(readonly key: string) {}
}

function isMetaObject(obj: unknown): obj is KubeObject {
  return typeof obj === "object" && obj !== null && typeof (obj as KubeObject).metadata === "object";
}

// #region key-func
/** `namespace/name`, or `name` for a cluster-scoped object (MetaNamespaceKeyFunc). */
export function metaNamespaceKeyFunc(obj: unknown): string {
  if (obj instanceof ExplicitKey) return obj.key;
  if (!isMetaObject(obj)) throw new KeyError(obj, "object has no meta");
  const { namespace, name = "" } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

/** The inverse of metaNamespaceKeyFunc (SplitMetaNamespaceKey). */
export function splitMetaNamespaceKey(key: string): { namespace: string; name: string } {
  const parts = key.split("/");
  if (parts.length === 1) return { namespace: "", name: parts[0] };
  if (parts.length === 2) return { namespace: parts[0], name: parts[1] };
  throw new KeyError(key, `unexpected key format: "${key}"`);
}
// #endregion key-func
