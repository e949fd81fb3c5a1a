// Mistake: a renewal writes the default record with only the count carried over — acquireTime
// becomes now on every renewal. Plausible: desiredRecord already has both times set to now, and
// "the transitions are what matters". But acquireTime is when this leader's term began: with it
// reset every 2 s, `kubectl get lease -o yaml` can no longer tell how long the leader has led.
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
  const record = desiredRecord(identity, leaseDurationSeconds, now);
  if (ours) return { action: "renew", record: { ...record, leaderTransitions: held.leaderTransitions } };
  return { action: "acquire", record: { ...record, leaderTransitions: held.leaderTransitions + 1 } };
}
