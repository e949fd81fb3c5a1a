// Mistake: expiry is checked before identity — an expired lease is "free", even our own, so a leader
// whose renewals failed for a while re-acquires itself as a new term. Plausible: "expired means
// anyone may take it, and I am anyone". But it is still the same leader's term: upstream renews
// whenever the record names us, keeping acquireTime and leaderTransitions; this version counts a
// hand-over that never happened and restarts the term's start time.
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
  const record = desiredRecord(identity, leaseDurationSeconds, now);
  if (held.holderIdentity === "" || !leaseValid) {
    return { action: "acquire", record: { ...record, leaderTransitions: held.leaderTransitions + 1 } };
  }
  if (!ours) return { action: "wait", holder: held.holderIdentity };
  return {
    action: "renew",
    record: { ...record, acquireTime: held.acquireTime, leaderTransitions: held.leaderTransitions },
  };
}
