/**
 * Exercise: ReleaseOnCancel's release. A leader shutting down cleanly clears the lock, so that a
 * follower takes over at its next try instead of waiting out the lease. README.md has the record
 * to write and the rules.
 *
 * Resolve with the observation after the release (unchanged if there was nothing to release);
 * reject with the lock's error, or when the write takes longer than renewDeadline. The test runs
 * your release inside the course's real LeaderElector.
 */
import type { Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ReleaseParams } from "../../../code/leaderelection/leader-elector.ts";

export async function release(p: ReleaseParams): Promise<Observation> {
  throw new Error(`TODO: release(holder ${p.observed.record.holderIdentity}, as ${p.lock.identity()})`);
}
