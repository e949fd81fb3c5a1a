// Mistake: the lease is judged by the renewTime the holder wrote — renewTime + leaseDuration > now.
// Plausible: it is what the field is for, and on one machine it works. But renewTime was written
// with the holder's clock: a holder whose clock is an hour behind looks expired the moment it
// renews (the followers take over a live leader — two leaders), and one an hour ahead keeps its
// lease an hour after it died.
import type { Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ObservedLock } from "../../../code/leaderelection/resourcelock/interface.ts";

export function observe(prev: Observation, got: ObservedLock, now: number): Observation {
  if (got.raw === prev.raw) return prev;
  return { record: got.record, raw: got.raw, time: now };
}

export function isLeaseValid(obs: Observation, now: number): boolean {
  return obs.record.renewTime + obs.record.leaseDurationSeconds * 1000 > now;
}
