// The reference answer, written out in the two steps README.md's table is made of. The course's
// own watch cache decides the same in CacheWatcher.convertToWatchEvent,
// code/apiserver/storage/cache-watcher.ts (region convert), for every client watch on every
// change (there it also skips keys outside the watch's scope).
//
// A recorded mistake next to this file (wrong-*.ts) is this answer with one step done wrong: it
// builds its convertToWatchEvent with `watchFilter({ ...reference, <step> })`.
import type { KubeObject } from "../../../code/api/meta.ts";
import type { SelectionPredicate, StorageWatchEvent } from "../../../code/apiserver/storage/interfaces.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

/** Whether a watcher with this predicate wants `obj`. */
export const selects = (pred: SelectionPredicate, obj: KubeObject): boolean =>
  pred.empty || pred.matches(obj);

export interface WatchFilterSteps {
  /** What this watcher is sent for `ev` — the table's right-hand column — or undefined for nothing. */
  eventType(ev: WatchCacheEvent, pred: SelectionPredicate): StorageWatchEvent["type"] | undefined;
  /** The object a DELETED event carries: one the watcher has, at the change's resourceVersion. */
  deletedObject(ev: WatchCacheEvent): KubeObject;
}

export const reference: WatchFilterSteps = {
  eventType(ev, pred) {
    // A deleted object matches nothing any more: only its old self can decide.
    const isIn = ev.type !== "DELETED" && selects(pred, ev.object);
    const wasIn = ev.prevObject !== undefined && selects(pred, ev.prevObject);
    if (isIn) return wasIn ? "MODIFIED" : "ADDED";
    return wasIn ? "DELETED" : undefined;
  },

  // It left this selection (or was deleted): the object as the watcher knew it — a copy, since
  // the cache's objects are shared by every watcher — at this change's revision.
  deletedObject(ev) {
    const old = structuredClone(ev.prevObject as KubeObject);
    old.metadata.resourceVersion = String(ev.resourceVersion);
    return old;
  },
};

/** The exercise's function, made of `step`. */
export function watchFilter(step: WatchFilterSteps) {
  return function convertToWatchEvent(
    ev: WatchCacheEvent,
    pred: SelectionPredicate,
  ): StorageWatchEvent | undefined {
    const type = step.eventType(ev, pred);
    if (type === undefined) return undefined;
    return { type, object: type === "DELETED" ? step.deletedObject(ev) : structuredClone(ev.object) };
  };
}

export const convertToWatchEvent = watchFilter(reference);
