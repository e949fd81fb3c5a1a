// Mistake: every patch item is appended, without looking for a live item with the same key.
// Plausible because "merge two lists" often means concatenating them, as a JSON merge patch never
// does for lists; but `kubectl set image` then gives the pod two containers named app.
import { mergeByKey, reference } from "./merge-by-key.ts";

export type { JSONMap } from "./merge-by-key.ts";

export const mergeListByKey = mergeByKey({
  ...reference,
  // The mistake: no lookup by key — nothing ever matches.
  indexOfMatch: () => -1,
});
