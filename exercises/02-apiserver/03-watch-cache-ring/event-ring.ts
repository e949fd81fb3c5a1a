/**
 * Exercise: the watch cache's ring of recent events, and 410 Gone, reason Expired.
 *
 * The watch cache remembers the last `capacity` changes of a resource so that a client whose
 * watch broke can resume from the resourceVersion it last saw. The ring starts empty after a full
 * list at `listResourceVersion`; each change is added at the end, and when the ring is full the
 * oldest is forgotten. A resume from a resourceVersion the ring no longer reaches back to is
 * refused with 410 Gone, reason Expired. README.md has the rules.
 *
 * Helper you may import: `tooOldResourceVersion(requested, oldest)` from
 * code/apiserver/storage/errors.ts — the StatusError 410 Gone, reason Expired `too old resource version: N (M)`.
 */
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

export class EventRing {
  /**
   * An empty ring of at most `capacity` events, right after a list read at `listResourceVersion`
   * (the watch that feeds it starts just after that list).
   */
  constructor(
    readonly capacity: number,
    readonly listResourceVersion: number,
  ) {}

  /** Remembers one change (resourceVersions only grow); forgets the oldest if the ring is full. */
  add(event: WatchCacheEvent): void {
    throw new Error(
      `TODO: add — keep the event at resourceVersion ${event.resourceVersion} in a ring of ${this.capacity}`,
    );
  }

  /**
   * Every event after `rv` (rv ≥ 1), oldest first — or a 410 Gone, reason Expired StatusError when the ring no
   * longer holds every change after `rv`.
   */
  getAllEventsSince(rv: number): WatchCacheEvent[] {
    throw new Error(
      `TODO: getAllEventsSince — the events after ${rv}, or 410 if the ring no longer reaches back there`,
    );
  }
}
