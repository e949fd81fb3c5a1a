// Mistake: DELETED carries the old object with its old resourceVersion, not the change's.
// Plausible because it is the object exactly as the watcher knew it; but the client records a
// resourceVersion from before the deletion and, resuming from it, is sent the deletion again.
import type { KubeObject } from "../../../code/api/meta.ts";
import { reference, watchFilter } from "./watch-filter.ts";

export const convertToWatchEvent = watchFilter({
  ...reference,
  // The mistake: the previous object as it is, resourceVersion and all.
  deletedObject: (ev) => structuredClone(ev.prevObject as KubeObject),
});
