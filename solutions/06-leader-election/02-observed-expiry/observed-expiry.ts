/**
 * Solution: expiry by observed time.
 */
import type { Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ObservedLock } from "../../../code/leaderelection/resourcelock/interface.ts";

export function observe(prev: Observation, got: ObservedLock, now: number): Observation {
  // The same bytes: nobody wrote since we last looked, so the silence goes on counting.
  if (got.raw === prev.raw) return prev;
  // New bytes — a renewal, a new holder, a release: the clock restarts, on our clock.
  return { record: got.record, raw: got.raw, time: now };
}

export function isLeaseValid(obs: Observation, now: number): boolean {
  // The holder says how long it may be silent; our clock says how long it has been.
  return obs.time + obs.record.leaseDurationSeconds * 1000 > now;
}
