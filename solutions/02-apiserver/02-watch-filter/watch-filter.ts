// The reference answer is the course's own code: CacheWatcher.convert in
// code/apiserver/storage/cacher.ts (region convert), which every client watch served from the
// watch cache runs on every change (there it also skips keys outside the watch's scope).
import type { KubeObject } from "../../../code/api/meta.ts";
import type { SelectionPredicate, StorageWatchEvent } from "../../../code/apiserver/storage/interfaces.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

export function convertToWatchEvent(
  ev: WatchCacheEvent,
  pred: SelectionPredicate,
): StorageWatchEvent | undefined {
  const test = (o: KubeObject) => pred.empty || pred.matches(o);
  // A deleted object matches nothing any more: only its old self can decide.
  const curPasses = ev.type !== "DELETED" && test(ev.object);
  const oldPasses = ev.prevObject !== undefined && test(ev.prevObject);
  // The cache's objects are shared by every watcher: hand out copies.
  if (curPasses && oldPasses) return { type: "MODIFIED", object: structuredClone(ev.object) };
  if (curPasses) return { type: "ADDED", object: structuredClone(ev.object) };
  if (oldPasses) {
    // It left this selection (or was deleted): the object as the watcher knew it, at this change's revision.
    const old = structuredClone(ev.prevObject as KubeObject);
    old.metadata.resourceVersion = String(ev.resourceVersion);
    return { type: "DELETED", object: old };
  }
  return undefined;
}
