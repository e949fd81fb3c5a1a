// Mistake: a lost race is reported to the caller as 409 Conflict instead of retried. Plausible
// because 409 is what a client gets for a stale resourceVersion; but here the race is the
// storage's own (another request between this server's read and write), and it becomes the
// client's problem.
import { newConflict, optimisticLockErrorMsg } from "../../../code/apiserver/errors.ts";
import { nameOfKey } from "../../../code/apiserver/storage/errors.ts";
import { guaranteedUpdateWith, reference } from "./guaranteed-update.ts";

export const guaranteedUpdate = guaranteedUpdateWith({
  ...reference,
  // The mistake: give up after one conflict.
  afterLostRace: (t) => {
    throw newConflict(t.gr, nameOfKey(t.key), optimisticLockErrorMsg);
  },
});
