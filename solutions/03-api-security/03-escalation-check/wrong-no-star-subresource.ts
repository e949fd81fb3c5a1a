// Mistake: `*/scale` is not understood, only `*` and exact names. Plausible because `*/scale`
// looks like a rare special case; but then the holder of `*/scale` cannot grant
// `deployments/scale`, and default roles using it fail to reconcile.
import { coversWith, reference } from "./covers.ts";

export const covers = coversWith({
  ...reference,
  // The mistake: no `*/<subresource>` form.
  resourceCovered: (owned, resource) => owned.includes("*") || owned.includes(resource),
});
