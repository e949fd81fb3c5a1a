// Mistake: an object that matched before is MODIFIED whatever it is now — so one that left the selection is still sent, as MODIFIED, to a client whose selector it no longer matches, and the client never drops it.
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
  if (ev.type === "DELETED") {
    if (!oldPasses) return undefined;
    const old = structuredClone(ev.prevObject as KubeObject);
    old.metadata.resourceVersion = String(ev.resourceVersion);
    return { type: "DELETED", object: old };
  }
  // The mistake: "it was mine, so this is an update of it".
  if (oldPasses) return { type: "MODIFIED", object: structuredClone(ev.object) };
  if (curPasses) return { type: "ADDED", object: structuredClone(ev.object) };
  return undefined;
}
