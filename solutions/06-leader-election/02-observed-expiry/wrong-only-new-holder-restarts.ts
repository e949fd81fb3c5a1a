// Mistake: only a change of holder restarts the clock — the records are compared by
// holderIdentity, not by their bytes. Plausible: "the lease changed hands or it did not". But a
// renewal changes only renewTime: the holder is the same, so its renewals go unseen, and after
// leaseDuration the followers take over a leader that has been renewing all along.
import type { Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ObservedLock } from "../../../code/leaderelection/resourcelock/interface.ts";

export function observe(prev: Observation, got: ObservedLock, now: number): Observation {
  if (got.record.holderIdentity === prev.record.holderIdentity && prev.raw !== "") return prev;
  return { record: got.record, raw: got.raw, time: now };
}

export function isLeaseValid(obs: Observation, now: number): boolean {
  return obs.time + obs.record.leaseDurationSeconds * 1000 > now;
}
