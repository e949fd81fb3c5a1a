/**
 * Exercise: strategic merge of a list by key — how `kubectl patch` changes one container.
 *
 * A JSON merge patch replaces a list whole: patch `containers` with one container and the others
 * are gone. A strategic merge patch knows from the schema that `containers` is a set of items
 * identified by `name` (`patchStrategy: merge`, `patchMergeKey: name`) and merges it item by item;
 * `$patch` directives in the patch's items delete an item or replace the whole list.
 * README.md has the rules.
 *
 * Helper you may import: `errNoMergeKey(item, mergeKey)` from code/apiserver/patch/errors.ts —
 * the error for an item without its merge key, in upstream's words.
 */

/** A decoded JSON object. */
export type JSONMap = Record<string, unknown>;

/**
 * The live list merged with the patch's list, item by item by `mergeKey`. `mergeItem(live, p)`
 * merges one patch item into the live item with the same key (the strategic merge of the item's
 * own fields). Neither `live` nor `patch` is changed.
 */
export function mergeListByKey(
  live: JSONMap[],
  patch: JSONMap[],
  mergeKey: string,
  mergeItem: (liveItem: JSONMap, patchItem: JSONMap) => JSONMap,
): JSONMap[] {
  throw new Error(
    `TODO: mergeListByKey — merge ${patch.length} patch item(s) into ${live.length} live item(s) by "${mergeKey}" (${mergeItem.name || "mergeItem"} merges a match)`,
  );
}
