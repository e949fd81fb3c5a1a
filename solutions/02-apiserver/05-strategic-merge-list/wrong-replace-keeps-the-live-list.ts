// Mistake: `$patch: replace` is dropped from the patch but the live list is kept — the patch's items are merged into it instead of replacing it.
import { errNoMergeKey } from "../../../code/apiserver/patch/errors.ts";

export type JSONMap = Record<string, unknown>;

export function mergeListByKey(
  live: JSONMap[],
  patch: JSONMap[],
  mergeKey: string,
  mergeItem: (liveItem: JSONMap, patchItem: JSONMap) => JSONMap,
): JSONMap[] {
  let result = [...live];
  const plain: JSONMap[] = [];
  let replace = false;
  for (const item of patch) {
    if (!Object.hasOwn(item, "$patch")) {
      plain.push(item);
    } else if (item.$patch === "delete") {
      result = result.filter((l) => l[mergeKey] !== item[mergeKey]);
    } else if (item.$patch === "replace") {
      replace = true;
    }
  }
  // The mistake: the replace directive was noted, then forgotten.
  void replace;
  for (const item of plain) {
    if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    const i = result.findIndex((l) => l[mergeKey] === item[mergeKey]);
    if (i >= 0) result[i] = mergeItem(result[i], item);
    else result.push(structuredClone(item));
  }
  return result;
}
