// Mistake: `$patch: replace` is taken out of the patch but the live list is kept. Plausible because
// the directive is handled like `delete` — noted and dropped from the items; but the patch's items
// are then merged into the live list instead of replacing it.
import { mergeByKey, reference } from "./merge-by-key.ts";

export type { JSONMap } from "./merge-by-key.ts";

export const mergeListByKey = mergeByKey({
  ...reference,
  // The mistake: the replace directive was noted, then forgotten.
  replacement: () => undefined,
});
