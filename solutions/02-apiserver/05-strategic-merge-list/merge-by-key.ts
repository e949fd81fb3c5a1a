// The reference answer, written out in the steps README.md names. It follows the course's own
// code: mergeSliceWithSpecialElements and mergeSliceWithoutSpecialElements in
// code/apiserver/patch/strategic-merge-patch.ts (regions merge-slice and merge-by-key), which the
// PATCH handler runs for every list with `patchStrategy: merge` (there, the order is normalized
// afterwards).
//
// Each rule is one named step in `reference`; `mergeByKey` puts the steps together. A recorded
// mistake next to this file (wrong-*.ts) is this answer with one step done wrong: it builds its
// mergeListByKey with `mergeByKey({ ...reference, <step> })`.
import { errNoMergeKey } from "../../../code/apiserver/patch/errors.ts";

export type JSONMap = Record<string, unknown>;
type MergeItem = (liveItem: JSONMap, patchItem: JSONMap) => JSONMap;

export interface MergeByKeySteps {
  /** The field two items are matched on. */
  keyField(mergeKey: string): string;
  /** The list the result is built in, from the caller's live list. */
  resultList(live: JSONMap[]): JSONMap[];
  /** Whether a patch item is an instruction (`$patch`) rather than an item. */
  isDirective(item: JSONMap): boolean;
  /** The result under `$patch: replace`, from the patch's other items — undefined: merge as usual. */
  replacement(plain: JSONMap[]): JSONMap[] | undefined;
  /** Where in `list` the item with `item`'s key is, or -1. */
  indexOfMatch(list: JSONMap[], item: JSONMap, key: string): number;
  /** What a matched live item becomes. */
  merged(liveItem: JSONMap, patchItem: JSONMap, mergeItem: MergeItem): JSONMap;
  /** What an unmatched patch item becomes, appended to the result. */
  appended(patchItem: JSONMap): JSONMap;
  /** Removes from `list` what a `$patch: delete` item names. */
  removeDeleted(list: JSONMap[], item: JSONMap, key: string): void;
}

export const reference: MergeByKeySteps = {
  keyField: (mergeKey) => mergeKey,
  // A copy: the live list is the object the server read from storage (and may read again on a retry).
  resultList: (live) => [...live],
  isDirective: (item) => Object.hasOwn(item, "$patch"),
  // The live list is dropped altogether: the patch's items, as they are.
  replacement: (plain) => plain.map((p) => structuredClone(p)),
  indexOfMatch: (list, item, key) => list.findIndex((l) => l[key] === item[key]),
  merged: (liveItem, patchItem, mergeItem) => mergeItem(liveItem, patchItem),
  // A copy: the result must not share objects with the caller's patch.
  appended: (patchItem) => structuredClone(patchItem),
  // Every item with that key goes (none: no change); from the end, so a removal skips nothing.
  removeDeleted(list, item, key) {
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i][key] === item[key]) list.splice(i, 1);
    }
  },
};

/** The exercise's function, made of `step`. */
export function mergeByKey(step: MergeByKeySteps) {
  return function mergeListByKey(
    live: JSONMap[],
    patch: JSONMap[],
    mergeKey: string,
    mergeItem: MergeItem,
  ): JSONMap[] {
    const key = step.keyField(mergeKey);
    // An item that cannot be matched is an error, not an append: it would add a nameless container.
    const requireKey = (item: JSONMap) => {
      if (!Object.hasOwn(item, key)) throw errNoMergeKey(item, key);
    };
    // First the directives; neither kind of item is itself part of the result.
    const result = step.resultList(live);
    const plain: JSONMap[] = [];
    let replace = false;
    for (const item of patch) {
      if (!step.isDirective(item)) {
        plain.push(item);
      } else if (item.$patch === "delete") {
        requireKey(item);
        step.removeDeleted(result, item, key);
      } else if (item.$patch === "replace") {
        replace = true;
      }
    }
    const replaced = replace ? step.replacement(plain) : undefined;
    if (replaced) return replaced;
    // Then every other item, in patch order: merged into the item with its key, or appended.
    for (const item of plain) {
      requireKey(item);
      const i = step.indexOfMatch(result, item, key);
      if (i >= 0) result[i] = step.merged(result[i], item, mergeItem);
      else result.push(step.appended(item));
    }
    return result;
  };
}

export const mergeListByKey = mergeByKey(reference);
