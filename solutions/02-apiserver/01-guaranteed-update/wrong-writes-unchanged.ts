// Mistake: it writes whatever tryUpdate returns, even the unchanged object. Plausible because an
// update request "should" update; but every no-op update then costs a revision, a new
// resourceVersion and a MODIFIED event to every watcher.
import { guaranteedUpdateWith, reference } from "./guaranteed-update.ts";

export const guaranteedUpdate = guaranteedUpdateWith({
  ...reference,
  // The mistake: no "if nothing changed, return the stored object" — the txn always goes out.
  unchanged: () => false,
});
