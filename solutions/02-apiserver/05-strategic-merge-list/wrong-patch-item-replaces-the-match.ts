// Mistake: a patch item replaces the live item with its key instead of being merged into it — patching a container's image drops its ports, env and command.
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
    const i = result.findIndex((l) => l[mergeKey] === item[mergeKey]);
    // The mistake: the patch item as it is, where mergeItem(live, patch) belongs.
    if (i >= 0) result[i] = structuredClone(item);
    else result.push(structuredClone(item));
  }
  return result;
}
