// Mistake: ADDED and MODIFIED carry the cache's own object, not a copy. Plausible because nothing
// in the function changes it, so a copy looks like waste; but the object is shared by every
// watcher and kept in the cache's history — whatever one client's code does to the object it was
// sent (a default filled in, a field cleared before it is shown) every other watcher, and every
// later replay of the history, sees too.
import type { SelectionPredicate, StorageWatchEvent } from "../../../code/apiserver/storage/interfaces.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";
import { reference } from "./watch-filter.ts";

export function convertToWatchEvent(
  ev: WatchCacheEvent,
  pred: SelectionPredicate,
): StorageWatchEvent | undefined {
  const type = reference.eventType(ev, pred);
  if (type === undefined) return undefined;
  // The mistake: `ev.object` itself, where a structuredClone belongs.
  return { type, object: type === "DELETED" ? reference.deletedObject(ev) : ev.object };
}
