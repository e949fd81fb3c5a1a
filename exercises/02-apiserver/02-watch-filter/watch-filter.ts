/**
 * Exercise: what a filtered watcher sees of one change — convertToWatchEvent.
 *
 * The watch cache keeps, with every change, the object after it (`object`) and the object before
 * it (`prevObject`). Each client watch has a selector (the kubelet's: `spec.nodeName=node-1`) and
 * must be told about the change as IT sees it: an object that enters its selection was ADDED, one
 * that leaves was DELETED, one that stays was MODIFIED, and one it never sees is nothing at all.
 * README.md has the rules.
 *
 * `pred.matches(obj)` tests an object against the watcher's label and field selectors;
 * `pred.empty` is true when the watcher selects everything.
 */
import type { SelectionPredicate, StorageWatchEvent } from "../../../code/apiserver/storage/interfaces.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

/** The event a watcher with this predicate must be sent for `ev`, or undefined for none. */
export function convertToWatchEvent(
  ev: WatchCacheEvent,
  pred: SelectionPredicate,
): StorageWatchEvent | undefined {
  throw new Error(
    `TODO: convertToWatchEvent — does ${ev.key} match ${pred.empty ? "everything" : "the selector"} before and after this ${ev.type} at resourceVersion ${ev.resourceVersion}?`,
  );
}
