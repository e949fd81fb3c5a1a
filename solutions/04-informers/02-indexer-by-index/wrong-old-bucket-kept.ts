// Mistake: on update, only the new values are filed; the old ones are not taken out. Plausible —
// "add the key to its buckets" is all an insert needs, and update looks like an insert — but a
// pod that moved to another node is then found on both, and its old kubelet would run it too.
import type { KubeObject } from "../../../code/api/meta.ts";
import { MiniIndexer as Reference } from "./mini-indexer.ts";

export type { IndexFunc } from "./mini-indexer.ts";

export class MiniIndexer extends Reference {
  override upsert(key: string, obj: KubeObject): void {
    this.items.set(key, obj);
    this.refile(key, undefined, obj);
  }
}
