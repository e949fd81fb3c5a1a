// Mistake: a deletion is judged like any other change — the object after it (`ev.object`, the
// object as it was when deleted) is tested against the selector too. Plausible because for a
// DELETED event `ev.object` is still a whole object, and it matches; but then a deleted object the
// watcher had "is in before and after", and the watcher is sent MODIFIED for a pod that is gone.
import { reference, selects, watchFilter } from "./watch-filter.ts";

export const convertToWatchEvent = watchFilter({
  ...reference,
  eventType(ev, pred) {
    // The mistake: no `ev.type !== "DELETED"` — a deleted object can still "match after".
    const isIn = selects(pred, ev.object);
    const wasIn = ev.prevObject !== undefined && selects(pred, ev.prevObject);
    if (isIn) return wasIn ? "MODIFIED" : "ADDED";
    return wasIn ? "DELETED" : undefined;
  },
});
