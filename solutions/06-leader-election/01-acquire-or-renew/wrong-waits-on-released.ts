// Mistake: a released record is treated like any other — the candidate waits while its lease is
// valid. Plausible: the table "another holder, valid lease: wait" seems to cover it, and "" is not
// us. But a leader that released (ReleaseOnCancel) wrote "" precisely so that nobody has to wait:
// with this check the follower sits out the released lease, and the clean hand-over is lost.
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
  if (leaseValid && !ours) return { action: "wait", holder: held.holderIdentity };
  const record = desiredRecord(identity, leaseDurationSeconds, now);
  if (ours) {
    return {
      action: "renew",
      record: { ...record, acquireTime: held.acquireTime, leaderTransitions: held.leaderTransitions },
    };
  }
  return { action: "acquire", record: { ...record, leaderTransitions: held.leaderTransitions + 1 } };
}
