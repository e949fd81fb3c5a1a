// Mistake: the result is built in the caller's live list itself, so deletions and merged items are
// written into it. Plausible because the function returns the result anyway and copying looks
// wasteful; but the object the API server read from storage is changed in place, and a retry
// after a conflict starts from an already-patched copy.
import { mergeByKey, reference } from "./merge-by-key.ts";

export type { JSONMap } from "./merge-by-key.ts";

export const mergeListByKey = mergeByKey({
  ...reference,
  // The mistake: `live` itself, not a copy of it.
  resultList: (live) => live,
});
