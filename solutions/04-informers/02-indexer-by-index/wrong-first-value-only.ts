// Mistake: an object is filed under the first value its index function returns only. Plausible —
// the namespace index returns exactly one value, and most examples look like it — but an index
// by label value (or by the PVCs a pod mounts) files an object under several.
import type { KubeObject } from "../../../code/api/meta.ts";
import { MiniIndexer as Reference } from "./mini-indexer.ts";

export type { IndexFunc } from "./mini-indexer.ts";

export class MiniIndexer extends Reference {
  protected override valuesOf(name: string, obj: KubeObject | undefined): string[] {
    return super.valuesOf(name, obj).slice(0, 1);
  }
}
