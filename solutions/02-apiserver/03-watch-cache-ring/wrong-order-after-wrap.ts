// Mistake: the events are read from slot 0 to the end of the array rather than from the oldest
// kept. Plausible because array order is ring order until the ring first wraps — which small
// tests may never reach; after that, newer events come out before older ones.
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";
import { EventRing as Answer } from "./event-ring.ts";

export class EventRing extends Answer {
  // The mistake: slot order taken for time order.
  protected override kept(): WatchCacheEvent[] {
    return this.ring.filter((ev): ev is WatchCacheEvent => ev !== undefined);
  }
}
