/**
 * Exercise: an indexer — objects by key, and for each index function, the keys filed under
 * each value, kept right on every write (an object whose value changes leaves its old bucket;
 * empty buckets disappear). README.md has the rules.
 */
import type { KubeObject } from "../../../code/api/meta.ts";

export type IndexFunc = (obj: KubeObject) => string[];

export class MiniIndexer {
  constructor(readonly indexers: Record<string, IndexFunc>) {}

  upsert(key: string, obj: KubeObject): void {
    throw new Error(`TODO: upsert ${key} (${obj.metadata.name})`);
  }

  delete(key: string): void {
    throw new Error(`TODO: delete ${key}`);
  }

  get(key: string): KubeObject | undefined {
    throw new Error(`TODO: get ${key}`);
  }

  byIndex(indexName: string, value: string): KubeObject[] {
    throw new Error(`TODO: byIndex ${indexName}=${value}`);
  }

  indexKeys(indexName: string, value: string): string[] {
    throw new Error(`TODO: indexKeys ${indexName}=${value}`);
  }

  listIndexFuncValues(indexName: string): string[] {
    throw new Error(`TODO: listIndexFuncValues ${indexName}`);
  }
}
