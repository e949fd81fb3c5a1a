// Mistake: collapse any two consecutive deltas of the same type into the newer one. Plausible —
// "dedup" sounds like it removes repeats — but two Updated deltas are two changes, and a handler
// would miss one.
import { reference, withRules } from "./dedup-and-replace.ts";

export const { dedupDeltas, replaceDeltas } = withRules({
  ...reference,
  merge: (a, b) => (a.type === b.type ? (reference.merge(a, b) ?? a) : undefined),
});
