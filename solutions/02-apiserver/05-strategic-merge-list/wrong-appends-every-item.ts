// Mistake: every patch item is appended, without looking for a live item with the same key — `kubectl set image` gives the pod two containers named app.
import { errNoMergeKey } from "../../../code/apiserver/patch/errors.ts";

export type JSONMap = Record<string, unknown>;

export function mergeListByKey(
  live: JSONMap[],
  patch: JSONMap[],
  mergeKey: string,
  _mergeItem: (liveItem: JSONMap, patchItem: JSONMap) => JSONMap,
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
  if (replace) return plain.map((p) => structuredClone(p));
  for (const item of plain) {
    if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    // The mistake: no lookup by key.
    result.push(structuredClone(item));
  }
  return result;
}
