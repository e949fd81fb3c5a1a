/**
 * ThreadSafeStore — objects by key, plus the indices over them, kept consistent on every write.
 * Mirrors client-go tools/cache/thread_safe_store.go (ThreadSafeStore, threadSafeMap, storeIndex).
 *
 * Solves:
 * - the informer's cache is written by one loop and read by every controller worker; in Go a
 *   lock makes each write (object and indices together) atomic. In JavaScript a synchronous
 *   method is already atomic — no reader runs between its lines — so the name is upstream's and
 *   the guarantee is the event loop's.
 * - indices must follow updates: a pod moving from node A to node B leaves A's bucket.
 *
 * Invariants:
 * - a key is in `indices[name][value]` if and only if `items[key]` exists and `indexers[name]`
 *   files it under `value`; empty buckets are removed, so `listIndexFuncValues` lists only
 *   values that have objects;
 * - callers treat returned objects as read-only: they are the cached objects, not copies (as
 *   upstream, where mutating a cached object is a bug that corrupts every reader's view).
 *
 * @upstream kubernetes/client-go tools/cache/thread_safe_store.go (ThreadSafeStore, threadSafeMap, storeIndex, updateSingleIndex)
 * @chapter 04-informers
 */

import type { KubeObject } from "../../../api/meta.ts";
import type { Index, Indexers, IndexFunc } from "./index.ts";

/** An index name that was never registered (thread_safe_store.go's "does not exist" error). */
export class IndexNotFoundError extends Error {
  constructor(readonly indexName: string) {
    super(`Index with name ${indexName} does not exist`);
    this.name = "IndexNotFoundError";
  }
}

// #region store-index
/** The indices and the functions that compute them (storeIndex). */
class StoreIndex<T> {
  readonly indices = new Map<string, Index>();

  constructor(readonly indexers: Indexers<T>) {}

  /** Re-files `key` in every index: old object's values out, new object's values in. */
  updateIndices(oldObj: T | undefined, newObj: T | undefined, key: string): void {
    for (const name of Object.keys(this.indexers)) this.updateSingleIndex(name, oldObj, newObj, key);
  }

  updateSingleIndex(name: string, oldObj: T | undefined, newObj: T | undefined, key: string): void {
    const fn = this.indexers[name];
    const oldValues = oldObj === undefined ? [] : fn(oldObj);
    const newValues = newObj === undefined ? [] : fn(newObj);
    let index = this.indices.get(name);
    if (!index) {
      index = new Map();
      this.indices.set(name, index);
    }
    // The common case — one value, unchanged — needs no work.
    if (oldValues.length === 1 && newValues.length === 1 && oldValues[0] === newValues[0]) return;
    for (const v of oldValues) {
      const bucket = index.get(v);
      if (!bucket) continue;
      bucket.delete(key);
      // An empty bucket would keep a value alive in listIndexFuncValues (and leak memory for
      // high-churn values such as node names or UIDs).
      if (bucket.size === 0) index.delete(v);
    }
    for (const v of newValues) {
      let bucket = index.get(v);
      if (!bucket) {
        bucket = new Set();
        index.set(v, bucket);
      }
      bucket.add(key);
    }
  }
}
// #endregion store-index

export class ThreadSafeStore<T = KubeObject> {
  private items = new Map<string, T>();
  private readonly idx: StoreIndex<T>;

  constructor(indexers: Indexers<T> = {}) {
    this.idx = new StoreIndex({ ...indexers });
  }

  // #region writes
  add(key: string, obj: T): void {
    this.update(key, obj);
  }

  update(key: string, obj: T): void {
    const old = this.items.get(key);
    this.items.set(key, obj);
    this.idx.updateIndices(old, obj, key);
  }

  delete(key: string): void {
    const old = this.items.get(key);
    if (old === undefined) return;
    this.idx.updateIndices(old, undefined, key);
    this.items.delete(key);
  }

  /** Swaps everything; the indices are rebuilt from scratch rather than diffed. */
  replace(items: Map<string, T>, _resourceVersion: string): void {
    this.items = new Map(items);
    this.idx.indices.clear();
    for (const [key, obj] of this.items) this.idx.updateIndices(undefined, obj, key);
  }
  // #endregion writes

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): string[] {
    return [...this.items.keys()];
  }

  // #region reads-by-index
  index(indexName: string, obj: T): T[] {
    const fn = this.indexFunc(indexName);
    const index = this.idx.indices.get(indexName);
    const keys = new Set<string>();
    for (const v of fn(obj)) for (const k of index?.get(v) ?? []) keys.add(k);
    return [...keys].map((k) => this.items.get(k)!);
  }

  indexKeys(indexName: string, indexedValue: string): string[] {
    this.indexFunc(indexName);
    return [...(this.idx.indices.get(indexName)?.get(indexedValue) ?? [])];
  }

  byIndex(indexName: string, indexedValue: string): T[] {
    return this.indexKeys(indexName, indexedValue).map((k) => this.items.get(k)!);
  }

  listIndexFuncValues(indexName: string): string[] {
    return [...(this.idx.indices.get(indexName)?.keys() ?? [])];
  }
  // #endregion reads-by-index

  getIndexers(): Indexers<T> {
    return { ...this.idx.indexers };
  }

  /** Adds index functions and files the objects already stored under them. */
  addIndexers(newIndexers: Indexers<T>): void {
    const clash = Object.keys(newIndexers).filter((n) => n in this.idx.indexers);
    if (clash.length > 0) throw new Error(`indexer conflict: ${clash.join(", ")}`);
    Object.assign(this.idx.indexers, newIndexers);
    for (const [key, obj] of this.items) {
      for (const name of Object.keys(newIndexers)) this.idx.updateSingleIndex(name, undefined, obj, key);
    }
  }

  resync(): void {}

  private indexFunc(indexName: string): IndexFunc<T> {
    const fn = this.idx.indexers[indexName];
    if (!fn) throw new IndexNotFoundError(indexName);
    return fn;
  }
}
