// Mistake: the events are read from slot 0 to the end of the array rather than from the oldest kept — once the ring has wrapped, newer events come out before older ones.
import { tooOldResourceVersion } from "../../../code/apiserver/storage/errors.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

export class EventRing {
  private readonly ring: (WatchCacheEvent | undefined)[];
  /** Events ever forgotten; the oldest kept is at startIndex % capacity. */
  private startIndex = 0;
  /** Events ever added; the next goes at endIndex % capacity. */
  private endIndex = 0;

  constructor(
    readonly capacity: number,
    private readonly listResourceVersion: number,
  ) {
    this.ring = new Array(capacity);
  }

  add(event: WatchCacheEvent): void {
    if (this.endIndex - this.startIndex === this.capacity) {
      this.ring[this.startIndex % this.capacity] = undefined;
      this.startIndex++;
    }
    this.ring[this.endIndex % this.capacity] = event;
    this.endIndex++;
  }

  getAllEventsSince(rv: number): WatchCacheEvent[] {
    let oldest: number;
    if (this.startIndex === 0) oldest = this.listResourceVersion + 1;
    else oldest = (this.ring[this.startIndex % this.capacity] as WatchCacheEvent).resourceVersion;
    if (rv < oldest - 1) throw tooOldResourceVersion(rv, oldest - 1);
    const out: WatchCacheEvent[] = [];
    // The mistake: array order is ring order only until the ring wraps.
    for (const ev of this.ring) {
      if (ev && ev.resourceVersion > rv) out.push(ev);
    }
    return out;
  }
}
