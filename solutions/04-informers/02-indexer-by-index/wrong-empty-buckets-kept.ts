// Mistake: a bucket that becomes empty is left in place. Plausible — the key is gone from it, so
// byIndex answers right — but listIndexFuncValues then reports values no object has (nodes with
// no pods), and the map grows with every value ever seen.
import { MiniIndexer as Reference } from "./mini-indexer.ts";

export type { IndexFunc } from "./mini-indexer.ts";

export class MiniIndexer extends Reference {
  protected override removeFromBucket(index: Map<string, Set<string>>, value: string, key: string): void {
    index.get(value)?.delete(key);
  }
}
