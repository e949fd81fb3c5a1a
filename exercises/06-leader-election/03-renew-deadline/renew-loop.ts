/**
 * Exercise: the leader's renew loop. Once leading, renew the lock every retryPeriod; when no
 * renewal succeeds within renewDeadline, stop — leadership is lost. README.md has the rules.
 *
 * `tryRenew(signal)` is one tryAcquireOrRenew: true if we still hold the lock. Pass it a signal
 * that aborts at the deadline, so that a request that hangs is cut off too. Resolve with
 * "context deadline exceeded" when the lease is lost, or undefined once `signal` has aborted.
 * The test runs your loop inside the course's real LeaderElector.
 */
import type { RenewTiming } from "../../../code/leaderelection/leader-elector.ts";

export async function renewLoop(
  signal: AbortSignal,
  tryRenew: (signal: AbortSignal) => Promise<boolean>,
  timing: RenewTiming,
): Promise<string | undefined> {
  throw new Error(
    `TODO: renewLoop(aborted ${signal.aborted}, ${typeof tryRenew}, deadline ${timing.renewDeadline} ms)`,
  );
}
