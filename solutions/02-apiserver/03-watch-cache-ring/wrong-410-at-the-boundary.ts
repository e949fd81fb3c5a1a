// Mistake: a resume from exactly the oldest servable resourceVersion is refused with 410. Plausible
// because "older than what the ring holds" reads like `<=`; but every change after that
// resourceVersion is still in the ring, so the client relists for nothing.
import { EventRing as Answer } from "./event-ring.ts";

export class EventRing extends Answer {
  // The mistake: `<=` where `<` belongs — the oldest servable resourceVersion can be served.
  protected override tooOld(rv: number, oldestServable: number): boolean {
    return rv <= oldestServable;
  }
}
