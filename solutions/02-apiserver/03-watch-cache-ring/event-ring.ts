// The reference answer is the course's own code: the ring of WatchCache in
// code/apiserver/storage/watch-cache.ts (regions process-event and events-since), which every
// Cacher replays client watches from. Here it is used as a ring only: no objects are listed.
import { WatchCache, type WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

export class EventRing {
  private readonly cache: WatchCache;

  constructor(
    readonly capacity: number,
    readonly listResourceVersion: number,
  ) {
    this.cache = new WatchCache(capacity);
    this.cache.replace([], listResourceVersion);
  }

  add(event: WatchCacheEvent): void {
    this.cache.processEvent(event.type, event.key, event.object, event.resourceVersion);
  }

  getAllEventsSince(rv: number): WatchCacheEvent[] {
    return this.cache.getAllEventsSince(rv);
  }
}
