// Mistake: the 410 names the oldest kept event's resourceVersion instead of the oldest resourceVersion a client could resume from (one less) — not kube-apiserver's message.
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
    // The mistake: (oldest) instead of (oldest − 1) in the message.
    if (rv < oldest - 1) throw tooOldResourceVersion(rv, oldest);
    const out: WatchCacheEvent[] = [];
    for (let i = this.startIndex; i < this.endIndex; i++) {
      const ev = this.ring[i % this.capacity] as WatchCacheEvent;
      if (ev.resourceVersion > rv) out.push(ev);
    }
    return out;
  }
}
