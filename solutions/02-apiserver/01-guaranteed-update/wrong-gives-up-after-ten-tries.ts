// Mistake: a lost race is retried, but only a few times; then it is reported as 409 Conflict.
// Plausible because an unbounded loop looks dangerous; but every try that lost made progress for
// someone else, the loop ends as soon as one write lands, and upstream's GuaranteedUpdate has no
// limit — a busy object (a node's status, a popular ConfigMap) would fail updates under load.
import { newConflict, optimisticLockErrorMsg } from "../../../code/apiserver/errors.ts";
import { nameOfKey } from "../../../code/apiserver/storage/errors.ts";
import { guaranteedUpdateWith, reference } from "./guaranteed-update.ts";

let lost = 0;
export const guaranteedUpdate = guaranteedUpdateWith({
  ...reference,
  // The mistake: a retry budget (counted per call: the count starts again at the first try).
  checksPreconditions: (attempt) => {
    if (attempt === 0) lost = 0;
    return true;
  },
  afterLostRace: (t, resp, state, read) => {
    if (++lost >= 10) throw newConflict(t.gr, nameOfKey(t.key), optimisticLockErrorMsg);
    return reference.afterLostRace(t, resp, state, read);
  },
});
