// Mistake: an object that matched before is MODIFIED whatever it is now. Plausible because "it
// was mine, and it changed" sounds like an update; but one that left the selection is then still
// sent, as MODIFIED, to a client whose selector it no longer matches, and the client never drops it.
import { reference, selects, watchFilter } from "./watch-filter.ts";

export const convertToWatchEvent = watchFilter({
  ...reference,
  eventType(ev, pred) {
    const wasIn = ev.prevObject !== undefined && selects(pred, ev.prevObject);
    if (ev.type === "DELETED") return wasIn ? "DELETED" : undefined;
    // The mistake: "it was mine, so this is an update of it" — the new object is never tested.
    if (wasIn) return "MODIFIED";
    return selects(pred, ev.object) ? "ADDED" : undefined;
  },
});
