// Mistake: the DELETED object is the cache's own previous object, its resourceVersion overwritten
// in place. Plausible because the object is "only" relabelled with the change's revision and it
// saves a copy; but every other watcher, and every later replay of the cache's history, now sees
// that object at the wrong resourceVersion.
import type { KubeObject } from "../../../code/api/meta.ts";
import { reference, watchFilter } from "./watch-filter.ts";

export const convertToWatchEvent = watchFilter({
  ...reference,
  deletedObject(ev) {
    // The mistake: no copy — this object is shared with the watch cache and all its watchers.
    const old = ev.prevObject as KubeObject;
    old.metadata.resourceVersion = String(ev.resourceVersion);
    return old;
  },
});
