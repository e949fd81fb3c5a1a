/**
 * FilteringResourceEventHandler — a handler that only hears about objects a filter accepts, and
 * turns an update that crosses the filter into an add or a delete.
 *
 * @upstream kubernetes/client-go tools/cache/controller.go (FilteringResourceEventHandler, OnAdd, OnUpdate, OnDelete)
 * @chapter 05-scheduler
 *
 * Solves: the scheduler watches pods once but keeps two views — unscheduled pods in its queue,
 * bound pods in its cache. A pod's binding is an update of one object that must leave the
 * first view and enter the second; with a filter per view, the informer's single update becomes
 * a delete for the queue's handler and an add for the cache's.
 *
 * Invariants:
 * - old and new pass the filter: onUpdate; only new passes: onAdd(new, false); only old
 *   passes: onDelete(old); neither: nothing.
 * - a delete's object (or tombstone) is passed to the filter as it came; the filter decides
 *   what to do with a DeletedFinalStateUnknown.
 */
import type { DeletedFinalStateUnknown } from "./delta-fifo.ts";
import type { ResourceEventHandler } from "./shared-informer.ts";

// #region filtering-handler
export function filteringResourceEventHandler<T>(
  filter: (obj: T | DeletedFinalStateUnknown<T>) => boolean,
  handler: ResourceEventHandler<T>,
): ResourceEventHandler<T> {
  return {
    onAdd(obj, isInInitialList) {
      if (filter(obj)) return handler.onAdd?.(obj, isInInitialList);
    },
    onUpdate(oldObj, newObj) {
      const newer = filter(newObj);
      const older = filter(oldObj);
      if (newer && older) return handler.onUpdate?.(oldObj, newObj);
      if (newer) return handler.onAdd?.(newObj, false);
      if (older) return handler.onDelete?.(oldObj);
    },
    onDelete(obj) {
      if (filter(obj)) return handler.onDelete?.(obj);
    },
  };
}
// #endregion filtering-handler
