// Mistake: an object that leaves the selection is DELETED carrying the new object. Plausible
// because every other event carries `ev.object`; but the new object no longer matches the
// client's selector, and it is not the object the client has.
import { reference, watchFilter } from "./watch-filter.ts";

export const convertToWatchEvent = watchFilter({
  ...reference,
  // The mistake: `ev.object` — the object after the change — where the object before belongs.
  deletedObject: (ev) => structuredClone(ev.object),
});
