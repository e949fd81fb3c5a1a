// The reference answer. The course's informers keep their indices the same way in
// code/client/tools/cache/thread-safe-store.ts (region store-index).
//
// A recorded mistake next to this file (wrong-*.ts) is this answer with one step done wrong: it
// subclasses MiniIndexer and overrides the step.
import type { KubeObject } from "../../../code/api/meta.ts";

export type IndexFunc = (obj: KubeObject) => string[];

export class MiniIndexer {
  protected items = new Map<string, KubeObject>();
  protected indices = new Map<string, Map<string, Set<string>>>();

  constructor(readonly indexers: Record<string, IndexFunc>) {
    for (const name of Object.keys(indexers)) this.indices.set(name, new Map());
  }

  upsert(key: string, obj: KubeObject): void {
    const old = this.items.get(key);
    this.items.set(key, obj);
    this.refile(key, old, obj);
  }

  delete(key: string): void {
    const old = this.items.get(key);
    if (old === undefined) return;
    this.items.delete(key);
    this.refile(key, old, undefined);
  }

  get(key: string): KubeObject | undefined {
    return this.items.get(key);
  }

  byIndex(indexName: string, value: string): KubeObject[] {
    return this.indexKeys(indexName, value).map((k) => this.items.get(k)!);
  }

  indexKeys(indexName: string, value: string): string[] {
    return [...(this.index(indexName).get(value) ?? [])];
  }

  listIndexFuncValues(indexName: string): string[] {
    return [...this.index(indexName).keys()];
  }

  protected valuesOf(name: string, obj: KubeObject | undefined): string[] {
    return obj === undefined ? [] : this.indexers[name](obj);
  }

  protected refile(key: string, oldObj: KubeObject | undefined, newObj: KubeObject | undefined): void {
    for (const name of Object.keys(this.indexers)) {
      const index = this.indices.get(name)!;
      for (const v of this.valuesOf(name, oldObj)) this.removeFromBucket(index, v, key);
      for (const v of this.valuesOf(name, newObj)) {
        const bucket = index.get(v) ?? new Set<string>();
        bucket.add(key);
        index.set(v, bucket);
      }
    }
  }

  protected removeFromBucket(index: Map<string, Set<string>>, value: string, key: string): void {
    const bucket = index.get(value);
    if (!bucket) return;
    bucket.delete(key);
    if (bucket.size === 0) index.delete(value);
  }

  private index(indexName: string): Map<string, Set<string>> {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`Index with name ${indexName} does not exist`);
    return index;
  }
}
