// Mistake: the lease is still valid at exactly observedTime + leaseDuration (>= instead of >).
// Plausible: "15 seconds means up to and including the 15th". Upstream's isLeaseValid asks whether
// observedTime + leaseDuration is *after* now: at exactly the boundary the lease has run out, and a
// follower trying at that moment takes over — with this version it waits one more retry period.
import type { Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ObservedLock } from "../../../code/leaderelection/resourcelock/interface.ts";

export function observe(prev: Observation, got: ObservedLock, now: number): Observation {
  if (got.raw === prev.raw) return prev;
  return { record: got.record, raw: got.raw, time: now };
}

export function isLeaseValid(obs: Observation, now: number): boolean {
  return obs.time + obs.record.leaseDurationSeconds * 1000 >= now;
}
