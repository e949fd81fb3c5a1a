// Mistake: the oldest servable resourceVersion is always taken from the oldest event in the ring,
// even when nothing was forgotten since the list. Plausible because once the ring has wrapped that
// is the rule; but revisions are shared by every resource, so the first change often comes a few
// revisions after the list — and a resume from the list's own resourceVersion is refused.
import { EventRing as Answer } from "./event-ring.ts";

export class EventRing extends Answer {
  // The mistake: no special case for "nothing forgotten since the list".
  protected override oldestServable(): number {
    const oldest = this.ring[this.startIndex % this.capacity];
    return oldest ? oldest.resourceVersion - 1 : this.listResourceVersion;
  }
}
