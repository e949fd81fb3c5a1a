// Mistake: the known-objects loop does not skip keys that already have deltas queued. Plausible —
// "every known key the list lacks is deleted" is true — but the second tombstone, with the
// cache's older object, wins the dedup and the handler sees a final state older than the queue's.
import { reference, withRules } from "./dedup-and-replace.ts";

export const { dedupDeltas, replaceDeltas } = withRules({
  ...reference,
  tombstoneKnown: (key, listed) => !listed.has(key),
});
