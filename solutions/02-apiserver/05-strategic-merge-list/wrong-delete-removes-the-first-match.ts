// Mistake: a `$patch: delete` removes the first live item with its key and stops. Plausible
// because names in a list are meant to be unique; but a live list can hold two items with one key
// (an object written before validation caught it, ports that share a containerPort on TCP and UDP),
// and upstream's delete removes every one of them.
import { mergeByKey, reference } from "./merge-by-key.ts";

export const mergeListByKey = mergeByKey({
  ...reference,
  // The mistake: findIndex and one splice, where every match goes.
  removeDeleted(list, item, key) {
    const i = list.findIndex((l) => l[key] === item[key]);
    if (i >= 0) list.splice(i, 1);
  },
});
