// Mistake: the ring never forgets — every event since the list is kept. Plausible because a longer
// history only seems kinder to clients; but memory grows with every write, and a client resuming
// from long ago is replayed a history upstream would have answered with 410.
//
// Unlike the other recorded mistakes this is a different answer, not the reference with one step
// changed: with nothing to forget there is no ring, only a growing list.
import { tooOldResourceVersion } from "../../../code/apiserver/storage/errors.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

export class EventRing {
  private readonly events: WatchCacheEvent[] = [];

  constructor(
    readonly capacity: number,
    private readonly listResourceVersion: number,
  ) {}

  add(event: WatchCacheEvent): void {
    // The mistake: `capacity` is never enforced — the history grows without bound.
    this.events.push(event);
  }

  getAllEventsSince(rv: number): WatchCacheEvent[] {
    if (rv < this.listResourceVersion) throw tooOldResourceVersion(rv, this.listResourceVersion);
    return this.events.filter((ev) => ev.resourceVersion > rv);
  }
}
