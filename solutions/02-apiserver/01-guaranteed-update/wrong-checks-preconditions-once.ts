// Mistake: the preconditions are checked once, before the first try. Plausible because they are
// the caller's conditions on "the object", and it was checked; but a retry after a lost race then
// updates whatever object it finds — even one deleted and re-created with another uid since.
import { guaranteedUpdateWith, reference } from "./guaranteed-update.ts";

export const guaranteedUpdate = guaranteedUpdateWith({
  ...reference,
  // The mistake: checked against the first object read only.
  checksPreconditions: (attempt) => attempt === 0,
});
