/**
 * Exercise: expiry by observed time. A candidate never trusts the times a holder writes (its clock
 * may be an hour off); it trusts only *when it saw the record change*, on its own clock.
 *
 * - `observe(prev, got, now)`: the observation after a read of the lock at `now` (our clock).
 * - `isLeaseValid(obs, now)`: is the observed holder's lease still running at `now`?
 *
 * README.md has the rules. The test runs both inside the course's real LeaderElector.
 */
import type { Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ObservedLock } from "../../../code/leaderelection/resourcelock/interface.ts";

export function observe(prev: Observation, got: ObservedLock, now: number): Observation {
  throw new Error(
    `TODO: observe(${prev.raw.length} bytes seen before, ${got.raw.length} bytes read, at ${now})`,
  );
}

export function isLeaseValid(obs: Observation, now: number): boolean {
  throw new Error(`TODO: isLeaseValid(seen at ${obs.time}, at ${now})`);
}
