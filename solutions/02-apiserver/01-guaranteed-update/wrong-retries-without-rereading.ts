// Mistake: on a lost race it tries again from the state it already had, without reading the
// object again. Plausible because "retry" sounds like "do the same again"; but the compare holds
// the mod_revision read before the race, which can never match again — the loop never ends.
import { guaranteedUpdateWith, reference } from "./guaranteed-update.ts";

export const guaranteedUpdate = guaranteedUpdateWith({
  ...reference,
  // The mistake: the failure branch's read is ignored; the stale state is kept.
  afterLostRace: (_t, _resp, state) => state,
});
