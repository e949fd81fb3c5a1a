/**
 * Solution: tryAcquireOrRenew's decision table.
 */
import {
  type Decision,
  desiredRecord,
  isLeaseValid,
  type Observation,
} from "../../../code/leaderelection/acquire-or-renew.ts";

export function decideAcquireOrRenew(
  obs: Observation,
  now: number,
  identity: string,
  leaseDurationSeconds: number,
  leaseValid = isLeaseValid(obs, now),
): Decision {
  const held = obs.record;
  const ours = held.holderIdentity === identity;
  // Someone else holds it and has written within their lease (on our clock): not ours to take.
  if (held.holderIdentity !== "" && leaseValid && !ours)
    return { action: "wait", holder: held.holderIdentity };
  const record = desiredRecord(identity, leaseDurationSeconds, now);
  if (ours) {
    // A renewal: the term goes on, so its start and the hand-over count stay.
    return {
      action: "renew",
      record: { ...record, acquireTime: held.acquireTime, leaderTransitions: held.leaderTransitions },
    };
  }
  // Free ("" — released) or expired: a new term, one more hand-over.
  return { action: "acquire", record: { ...record, leaderTransitions: held.leaderTransitions + 1 } };
}
