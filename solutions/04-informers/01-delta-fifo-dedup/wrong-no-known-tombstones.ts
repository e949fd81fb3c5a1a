// Mistake: only queued keys get tombstones; keys the cache holds are not looked at. Plausible —
// the queue is "what the FIFO knows" — but an object deleted while the watch was down is in the
// cache, not the queue, so it stays there forever: a ghost.
import { reference, withRules } from "./dedup-and-replace.ts";

export const { dedupDeltas, replaceDeltas } = withRules({
  ...reference,
  tombstoneKnown: () => false,
});
