// Mistake: a patch item with no live match is appended as it is, not as a copy. Plausible because
// the patch is only read, and the item is exactly what belongs in the result; but the result and
// the caller's patch now share that object — whatever later changes the merged object (defaults
// filled in, the next merge of the same patch on a retry) changes the patch too.
import { mergeByKey, reference } from "./merge-by-key.ts";

export const mergeListByKey = mergeByKey({
  ...reference,
  // The mistake: the patch's own object in the result.
  appended: (patchItem) => patchItem,
});
