// Mistake: only the new object is tested — a change that takes an object out of the selection sends nothing, so the client keeps it forever; and every change of a matching object is MODIFIED, even the one that brought it in.
import type { KubeObject } from "../../../code/api/meta.ts";
import type { SelectionPredicate, StorageWatchEvent } from "../../../code/apiserver/storage/interfaces.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

export function convertToWatchEvent(
  ev: WatchCacheEvent,
  pred: SelectionPredicate,
): StorageWatchEvent | undefined {
  const test = (o: KubeObject) => pred.empty || pred.matches(o);
  if (ev.type === "DELETED") {
    if (!test(ev.object)) return undefined;
    const old = structuredClone(ev.object);
    old.metadata.resourceVersion = String(ev.resourceVersion);
    return { type: "DELETED", object: old };
  }
  // The mistake: the object before the change is never looked at.
  if (!test(ev.object)) return undefined;
  return { type: ev.type, object: structuredClone(ev.object) };
}
