// Mistake: a patch item replaces the live item with its key instead of being merged into it.
// Plausible because the item is "found and updated"; but patching a container's image then drops
// its ports, env and command.
import { mergeByKey, reference } from "./merge-by-key.ts";

export type { JSONMap } from "./merge-by-key.ts";

export const mergeListByKey = mergeByKey({
  ...reference,
  // The mistake: the patch item as it is, where mergeItem(live, patch) belongs.
  merged: (_liveItem, patchItem) => structuredClone(patchItem),
});
