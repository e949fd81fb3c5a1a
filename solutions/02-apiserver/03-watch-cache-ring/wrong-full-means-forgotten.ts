// Mistake: the ring counts as "something forgotten" as soon as it is full, not once an event has
// actually been dropped. Plausible because a full ring is the one about to forget; but a ring that
// has just filled up still holds every change since the list, and a client resuming from the
// list's resourceVersion is refused with a 410 it did not need, and must relist.
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";
import { EventRing as Answer } from "./event-ring.ts";

export class EventRing extends Answer {
  protected override oldestServable(): number {
    // The mistake: "full" (endIndex reached capacity) where "forgotten" (startIndex > 0) belongs.
    if (this.endIndex < this.capacity) return this.listResourceVersion;
    return (this.ring[this.startIndex % this.capacity] as WatchCacheEvent).resourceVersion - 1;
  }
}
