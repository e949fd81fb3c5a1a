// Mistake: after a lost race, a key that has disappeared is always NotFound, even with
// ignoreNotFound. Plausible because "deleted while I was updating it" sounds like an error; but the
// caller asked for create-or-update (an apply, a PUT that may create), and upstream's retry reads
// the state the same way as the first read: tryUpdate runs again with no object.
import { guaranteedUpdateWith, reference, stateFrom } from "./guaranteed-update.ts";

export const guaranteedUpdate = guaranteedUpdateWith({
  ...reference,
  // The mistake: the retry forgets ignoreNotFound.
  afterLostRace: (t, resp) => stateFrom({ ...t, ignoreNotFound: false }, resp.responses[0]?.responseRange),
});
