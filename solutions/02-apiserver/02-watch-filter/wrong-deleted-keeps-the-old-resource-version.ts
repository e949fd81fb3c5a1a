// Mistake: DELETED carries the old object with its old resourceVersion, not the change's — the client records a resourceVersion from before the deletion and, resuming from it, is sent the deletion again.
import type { KubeObject } from "../../../code/api/meta.ts";
import type { SelectionPredicate, StorageWatchEvent } from "../../../code/apiserver/storage/interfaces.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

export function convertToWatchEvent(
  ev: WatchCacheEvent,
  pred: SelectionPredicate,
): StorageWatchEvent | undefined {
  const test = (o: KubeObject) => pred.empty || pred.matches(o);
  const curPasses = ev.type !== "DELETED" && test(ev.object);
  const oldPasses = ev.prevObject !== undefined && test(ev.prevObject);
  if (curPasses && oldPasses) return { type: "MODIFIED", object: structuredClone(ev.object) };
  if (curPasses) return { type: "ADDED", object: structuredClone(ev.object) };
  // The mistake: the previous object as it is, resourceVersion and all.
  if (oldPasses) return { type: "DELETED", object: structuredClone(ev.prevObject as KubeObject) };
  return undefined;
}
