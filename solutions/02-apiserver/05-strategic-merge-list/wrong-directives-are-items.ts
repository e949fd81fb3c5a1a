// Mistake: `$patch` items are merged like any other item — `{name: sidecar, $patch: delete}` merges a `$patch` field into the sidecar instead of removing it, and `{$patch: replace}` is appended.
import { errNoMergeKey } from "../../../code/apiserver/patch/errors.ts";

export type JSONMap = Record<string, unknown>;

export function mergeListByKey(
  live: JSONMap[],
  patch: JSONMap[],
  mergeKey: string,
  mergeItem: (liveItem: JSONMap, patchItem: JSONMap) => JSONMap,
): JSONMap[] {
  const result = [...live];
  const plain: JSONMap[] = [];
  const replace = false;
  for (const item of patch) {
    // The mistake: directives are not looked at.
    plain.push(item);
  }
  if (replace) return plain.map((p) => structuredClone(p));
  for (const item of plain) {
    if (!Object.hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    const i = result.findIndex((l) => l[mergeKey] === item[mergeKey]);
    if (i >= 0) result[i] = mergeItem(result[i], item);
    else result.push(structuredClone(item));
  }
  return result;
}
