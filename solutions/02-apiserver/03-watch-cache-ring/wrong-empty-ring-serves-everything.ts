// Mistake: an empty ring answers every resume with no events, never with a 410. Plausible because
// with nothing kept there seems to be nothing to check; but the ring only knows the changes after
// the list: a client resuming from before the list's resourceVersion may have missed any of them,
// and must be told to relist.
import { EventRing as Answer } from "./event-ring.ts";

export class EventRing extends Answer {
  protected override tooOld(rv: number, oldestServable: number): boolean {
    // The mistake: no events kept, so nothing is "too old".
    return this.endIndex > 0 && rv < oldestServable;
  }
}
