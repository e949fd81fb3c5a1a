// Mistake: of two deletions, always keep the newer one. Plausible — "the latest event wins" is
// the rule almost everywhere else — but a tombstone queued by a relist after the real DELETED
// event then replaces the true final state with the cache's stale copy.
import { reference, withRules } from "./dedup-and-replace.ts";

export const { dedupDeltas, replaceDeltas } = withRules({
  ...reference,
  merge: (a, b) => (a.type === "Deleted" && b.type === "Deleted" ? a : undefined),
});
