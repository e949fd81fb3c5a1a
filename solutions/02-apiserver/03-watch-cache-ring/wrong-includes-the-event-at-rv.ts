// Mistake: the events from rv on are sent, the event at rv included. Plausible because "since rv"
// sounds inclusive; but rv is the last resourceVersion the client has seen, so it gets that change
// twice.
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";
import { EventRing as Answer } from "./event-ring.ts";

export class EventRing extends Answer {
  // The mistake: `>=` — the event at rv is the one the client already has.
  protected override isAfter(ev: WatchCacheEvent, rv: number): boolean {
    return ev.resourceVersion >= rv;
  }
}
