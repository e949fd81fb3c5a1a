// Mistake: every successful write counts as a transition — the renewal bumps leaderTransitions too.
// Plausible: "we wrote the lock again, so count it". But leaseTransitions counts hand-overs between
// holders; a leader renewing every 2 s would make `kubectl describe lease` report thousands of
// leadership changes that never happened, and hide the real ones.
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
  if (held.holderIdentity !== "" && leaseValid && !ours)
    return { action: "wait", holder: held.holderIdentity };
  const record = {
    ...desiredRecord(identity, leaseDurationSeconds, now),
    leaderTransitions: held.leaderTransitions + 1,
  };
  if (ours) return { action: "renew", record: { ...record, acquireTime: held.acquireTime } };
  return { action: "acquire", record };
}
