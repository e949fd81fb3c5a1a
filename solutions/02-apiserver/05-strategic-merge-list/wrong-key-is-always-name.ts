// Mistake: items are matched by their `name` whatever the merge key. Plausible because containers,
// volumes and env vars — the lists everyone patches — all merge on name; but conditions (by type)
// and ports (by containerPort) then never match, so every patch item is appended or never deleted.
import { mergeByKey, reference } from "./merge-by-key.ts";

export type { JSONMap } from "./merge-by-key.ts";

export const mergeListByKey = mergeByKey({
  ...reference,
  // The mistake: `name`, where the list's own merge key belongs.
  keyField: () => "name",
});
