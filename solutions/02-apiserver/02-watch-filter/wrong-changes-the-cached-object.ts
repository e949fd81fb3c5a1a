// Mistake: the DELETED object is the cache's own previous object, its resourceVersion overwritten in place — every other watcher, and every later replay of the cache's history, now sees that object at the wrong resourceVersion.
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
  if (oldPasses) {
    // The mistake: no copy — this object is shared with the watch cache and all its watchers.
    const old = ev.prevObject as KubeObject;
    old.metadata.resourceVersion = String(ev.resourceVersion);
    return { type: "DELETED", object: old };
  }
  return undefined;
}
