/**
 * Cache — the Store and Indexer everyone uses: it names each object with its key function and
 * leaves the storing and the index upkeep to a ThreadSafeStore.
 * Mirrors client-go tools/cache/store.go (cache, NewStore, NewIndexer).
 *
 * Solves:
 * - the ThreadSafeStore speaks keys; callers speak objects. This layer turns one into the other
 *   in one place, so the informer, the listers and the tests all key objects the same way.
 *
 * Invariants:
 * - every object is stored under `keyFunc(obj)`, so `get(obj)` and `getByKey(keyFunc(obj))`
 *   agree; a key function that throws surfaces as a KeyError.
 *
 * @upstream kubernetes/client-go tools/cache/store.go (cache, NewStore, NewIndexer)
 * @chapter 04-informers
 */

import type { KubeObject } from "../../../api/meta.ts";
import type { Indexer, Indexers, IndexFunc } from "./index.ts";
import { KeyError, type KeyFunc, type Store } from "./store.ts";
import { ThreadSafeStore } from "./thread-safe-store.ts";

/**
 * A Store (and Indexer) over a ThreadSafeStore: computes each object's key, and leaves
 * the storing and the index upkeep to the ThreadSafeStore (store.go `cache`).
 */
export class Cache<T = KubeObject> implements Indexer<T> {
  private readonly storage: ThreadSafeStore<T>;

  constructor(
    readonly keyFunc: KeyFunc<T>,
    indexers: Indexers<T> = {},
  ) {
    this.storage = new ThreadSafeStore<T>(indexers);
  }

  add(obj: T): void {
    this.storage.add(this.keyOf(obj), obj);
  }
  update(obj: T): void {
    this.storage.update(this.keyOf(obj), obj);
  }
  delete(obj: T): void {
    this.storage.delete(this.keyOf(obj));
  }
  list(): T[] {
    return this.storage.list();
  }
  listKeys(): string[] {
    return this.storage.listKeys();
  }
  get(obj: T): T | undefined {
    return this.storage.get(this.keyOf(obj));
  }
  getByKey(key: string): T | undefined {
    return this.storage.get(key);
  }
  replace(list: T[], resourceVersion: string): void {
    const items = new Map<string, T>();
    for (const obj of list) items.set(this.keyOf(obj), obj);
    this.storage.replace(items, resourceVersion);
  }
  resync(): void {}

  index(indexName: string, obj: T): T[] {
    return this.storage.index(indexName, obj);
  }
  indexKeys(indexName: string, indexedValue: string): string[] {
    return this.storage.indexKeys(indexName, indexedValue);
  }
  listIndexFuncValues(indexName: string): string[] {
    return this.storage.listIndexFuncValues(indexName);
  }
  byIndex(indexName: string, indexedValue: string): T[] {
    return this.storage.byIndex(indexName, indexedValue);
  }
  getIndexers(): Indexers<T> {
    return this.storage.getIndexers();
  }
  addIndexers(newIndexers: Record<string, IndexFunc<T>>): void {
    this.storage.addIndexers(newIndexers);
  }

  private keyOf(obj: T): string {
    try {
      return this.keyFunc(obj);
    } catch (err) {
      throw err instanceof KeyError ? err : new KeyError(obj, err);
    }
  }
}

/** A Store keyed by `keyFunc`, with no indices (NewStore). */
export function newStore<T = KubeObject>(keyFunc: KeyFunc<NoInfer<T>>): Store<T> {
  return new Cache<T>(keyFunc);
}

/** An Indexer keyed by `keyFunc`, maintaining `indexers` (NewIndexer). */
export function newIndexer<T = KubeObject>(keyFunc: KeyFunc<NoInfer<T>>, indexers: Indexers<T>): Indexer<T> {
  return new Cache<T>(keyFunc, indexers);
}
