// Mistake: an owner rule limited to resourceNames covers an atom without names. Plausible because
// "the owner has get on secrets"; but the atom without a name means *every* secret, so a user who
// may read one Secret could create — and bind — a role that reads them all.
import { coversWith, reference } from "./covers.ts";

export const covers = coversWith({
  ...reference,
  // The mistake: an unnamed atom passes whatever the owner's names.
  namesCovered: (owned, names) => names.length === 0 || reference.namesCovered(owned, names),
});
