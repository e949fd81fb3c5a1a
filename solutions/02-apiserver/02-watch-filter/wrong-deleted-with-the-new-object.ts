// Mistake: an object that leaves the selection is DELETED carrying the new object — which no longer matches the client's selector, and is not the object the client has.
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
  // The mistake: `ev.object` — the object after the change — where the object before belongs.
  if (oldPasses) return { type: "DELETED", object: structuredClone(ev.object) };
  return undefined;
}
