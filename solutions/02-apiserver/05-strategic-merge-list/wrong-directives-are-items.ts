// Mistake: `$patch` items are merged like any other item. Plausible because they look like items
// and carry the merge key; but `{name: sidecar, $patch: delete}` then merges a `$patch` field into
// the sidecar instead of removing it, and `{$patch: replace}` is appended.
import { mergeByKey, reference } from "./merge-by-key.ts";

export type { JSONMap } from "./merge-by-key.ts";

export const mergeListByKey = mergeByKey({
  ...reference,
  // The mistake: directives are not looked at.
  isDirective: () => false,
});
