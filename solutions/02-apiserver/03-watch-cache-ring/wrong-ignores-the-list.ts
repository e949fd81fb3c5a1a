// Mistake: the oldest servable resourceVersion is always taken from the oldest event in the ring, even when nothing was forgotten since the list — so a resume from the list's own resourceVersion is refused whenever the first change came a few revisions after the list.
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
    // The mistake: no special case for "nothing forgotten since the list".
    const first = this.ring[this.startIndex % this.capacity];
    const oldest = first ? first.resourceVersion : this.listResourceVersion + 1;
    if (rv < oldest - 1) throw tooOldResourceVersion(rv, oldest - 1);
    const out: WatchCacheEvent[] = [];
    for (let i = this.startIndex; i < this.endIndex; i++) {
      const ev = this.ring[i % this.capacity] as WatchCacheEvent;
      if (ev.resourceVersion > rv) out.push(ev);
    }
    return out;
  }
}
