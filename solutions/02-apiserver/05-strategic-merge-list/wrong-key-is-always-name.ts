// Mistake: items are matched by their `name` whatever the merge key — conditions (by type) and ports (by containerPort) never match, so every patch item is appended or never deleted.
import { errNoMergeKey } from "../../../code/apiserver/patch/errors.ts";

export type JSONMap = Record<string, unknown>;

export function mergeListByKey(
  live: JSONMap[],
  patch: JSONMap[],
  _mergeKey: string,
  mergeItem: (liveItem: JSONMap, patchItem: JSONMap) => JSONMap,
): JSONMap[] {
  let result = [...live];
  const plain: JSONMap[] = [];
  let replace = false;
  for (const item of patch) {
    if (!Object.hasOwn(item, "$patch")) {
      plain.push(item);
    } else if (item.$patch === "delete") {
      result = result.filter((l) => l.name !== item.name);
    } else if (item.$patch === "replace") {
      replace = true;
    }
  }
  if (replace) return plain.map((p) => structuredClone(p));
  for (const item of plain) {
    if (!Object.hasOwn(item, "name")) throw errNoMergeKey(item, "name");
    const i = result.findIndex((l) => l.name === item.name);
    if (i >= 0) result[i] = mergeItem(result[i], item);
    else result.push(structuredClone(item));
  }
  return result;
}
