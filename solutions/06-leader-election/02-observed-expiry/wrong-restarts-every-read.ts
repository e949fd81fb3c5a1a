// Mistake: every read restarts the clock — observedTime is set to now whether or not the bytes
// changed. Plausible: "we just saw the holder in the record, so it is alive". But a record nobody
// writes any more still reads back the same: a dead leader's lease never runs out for a follower
// that keeps looking, and nobody ever takes over.
import type { Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ObservedLock } from "../../../code/leaderelection/resourcelock/interface.ts";

export function observe(_prev: Observation, got: ObservedLock, now: number): Observation {
  return { record: got.record, raw: got.raw, time: now };
}

export function isLeaseValid(obs: Observation, now: number): boolean {
  return obs.time + obs.record.leaseDurationSeconds * 1000 > now;
}
