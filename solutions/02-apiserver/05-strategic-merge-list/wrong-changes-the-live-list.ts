// Mistake: merged items are written into the caller's live list — the object the API server read from storage is changed in place, and a retry after a conflict starts from an already-patched copy.
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
  if (replace) return plain.map((p) => structuredClone(p));
  for (const item of plain) {
    if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    const i = live.findIndex((l) => l[mergeKey] === item[mergeKey]);
    // The mistake: writing into `live`, not into the result.
    if (i >= 0) {
      live[i] = mergeItem(live[i], item);
      result = result.map((l) => (l[mergeKey] === item[mergeKey] ? live[i] : l));
    } else result.push(structuredClone(item));
  }
  return result;
}
