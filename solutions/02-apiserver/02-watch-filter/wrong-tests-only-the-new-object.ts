// Mistake: only the new object is tested, and etcd's event type is passed on. Plausible because
// that is what a watch without selectors does; but a change that takes an object out of the
// selection sends nothing, so the client keeps it forever — and the change that brings an object
// in is MODIFIED, for an object the client has never seen.
import { reference, selects, watchFilter } from "./watch-filter.ts";

export const convertToWatchEvent = watchFilter({
  ...reference,
  // The mistake: the object before the change is never looked at.
  eventType: (ev, pred) => (selects(pred, ev.object) ? ev.type : undefined),
});
