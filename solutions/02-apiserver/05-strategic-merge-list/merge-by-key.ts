// The reference answer follows the course's own code: mergeSliceWithSpecialElements and
// mergeSliceWithoutSpecialElements in code/apiserver/patch/strategic-merge-patch.ts (regions
// merge-slice and merge-by-key), which the PATCH handler runs for every list with
// `patchStrategy: merge` (there, the order is normalized afterwards).

import { errNoMergeKey } from "../../../code/apiserver/patch/errors.ts";

export type JSONMap = Record<string, unknown>;

export function mergeListByKey(
  live: JSONMap[],
  patch: JSONMap[],
  mergeKey: string,
  mergeItem: (liveItem: JSONMap, patchItem: JSONMap) => JSONMap,
): JSONMap[] {
  // First the directives: `$patch: delete` removes the live items with its key; `$patch: replace`
  // drops the live list altogether. Neither kind of item is itself part of the result.
  let result = [...live];
  const plain: JSONMap[] = [];
  let replace = false;
  for (const item of patch) {
    if (!Object.hasOwn(item, "$patch")) {
      plain.push(item);
    } else if (item.$patch === "delete") {
      if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
      result = result.filter((l) => l[mergeKey] !== item[mergeKey]);
    } else if (item.$patch === "replace") {
      replace = true;
    }
  }
  if (replace) return plain.map((p) => structuredClone(p));
  // Then every other item: merged into the live item with the same key, or appended.
  for (const item of plain) {
    // An item that cannot be matched is an error, not an append: it would add a nameless container.
    if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    const i = result.findIndex((l) => l[mergeKey] === item[mergeKey]);
    if (i >= 0) result[i] = mergeItem(result[i], item);
    else result.push(structuredClone(item));
  }
  return result;
}
