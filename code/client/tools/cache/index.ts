/**
 * Indexer — a Store that also answers "which objects have this value?" without a scan: the
 * namespace index, and any index a controller defines (pods by node, by owner, by PVC).
 * Mirrors kubernetes/client-go tools/cache/index.go (Indexer, IndexFunc, Indexers, Indices,
 * MetaNamespaceIndexFunc, NamespaceIndex).
 *
 * Solves:
 * - a controller reconciling one ReplicaSet needs the pods of one namespace, and a kubelet the
 *   pods of one node; scanning 10,000 cached pods per reconcile would make the cache useless, so an
 *   index maps each value to the set of keys that have it, kept right on every write.
 *
 * Invariants:
 * - an index function returns every value an object is filed under (zero, one or many);
 * - a key is in the bucket (index, value) if and only if the stored object's index function
 *   returns that value — an object whose value changes leaves its old bucket.
 *
 * @upstream kubernetes/client-go tools/cache/index.go (Indexer, IndexFunc, Indexers, Indices, Index, MetaNamespaceIndexFunc, NamespaceIndex)
 * @chapter 04-informers
 */

import type { KubeObject } from "../../../api/meta.ts";
import type { Store } from "./store.ts";

// #region indexer-interface
/** The values an object is filed under in one index (cache.IndexFunc). */
export type IndexFunc<T = KubeObject> = (obj: T) => string[];

/** Index functions by index name (cache.Indexers). */
export type Indexers<T = KubeObject> = Record<string, IndexFunc<T>>;

/** One index: indexed value → the keys of the objects filed under it (cache.Index). */
export type Index = Map<string, Set<string>>;

/** A Store with indices (cache.Indexer). */
export interface Indexer<T = KubeObject> extends Store<T> {
  /** The stored objects that share an index value with `obj` in `indexName`. */
  index(indexName: string, obj: T): T[];
  /** The keys filed under `indexedValue`. */
  indexKeys(indexName: string, indexedValue: string): string[];
  /** Every value that has at least one object in `indexName`. */
  listIndexFuncValues(indexName: string): string[];
  /** The objects filed under `indexedValue`. */
  byIndex(indexName: string, indexedValue: string): T[];
  getIndexers(): Indexers<T>;
  /** Adds index functions; objects already stored are indexed at once. */
  addIndexers(newIndexers: Indexers<T>): void;
}
// #endregion indexer-interface

// #region namespace-index
/** The name of the namespace index every informer factory adds (cache.NamespaceIndex). */
export const NamespaceIndex = "namespace";

/** Files an object under its namespace; cluster-scoped objects are filed under "" (MetaNamespaceIndexFunc). */
export function metaNamespaceIndexFunc(obj: KubeObject): string[] {
  return [obj.metadata.namespace ?? ""];
}
// #endregion namespace-index
