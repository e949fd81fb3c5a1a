// Mistake: the deadline is only compared with the retry period, not with retryPeriod × JitterFactor.
// Plausible: "the deadline must be longer than one retry". But the leader's tries are spaced by up to
// retryPeriod × (1 + jitter) under load, and a 2.4 s deadline with a 2 s retry period leaves room
// for a single try: one lost request and the leader steps down.
import {
  type LeaderElectionConfig,
  LeaderElectionConfigError,
} from "../../../code/leaderelection/leader-elector.ts";

export function validateLeaderElectionConfig(
  c: Partial<LeaderElectionConfig>,
): LeaderElectionConfigError | undefined {
  const fail = (message: string) => new LeaderElectionConfigError(message);
  const leaseDuration = c.leaseDuration ?? 0;
  const renewDeadline = c.renewDeadline ?? 0;
  const retryPeriod = c.retryPeriod ?? 0;
  // The leader must give up before a follower may take over…
  if (leaseDuration <= renewDeadline) return fail("leaseDuration must be greater than renewDeadline");
  // …and get more than one jittered retry in before it gives up.
  if (renewDeadline <= retryPeriod) {
    return fail("renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  if (leaseDuration <= 0) return fail("leaseDuration must be greater than zero");
  if (renewDeadline <= 0) return fail("renewDeadline must be greater than zero");
  if (retryPeriod <= 0) return fail("retryPeriod must be greater than zero");
  if (!c.callbacks?.onStartedLeading) return fail("OnStartedLeading callback must not be nil");
  if (!c.callbacks?.onStoppedLeading) return fail("OnStoppedLeading callback must not be nil");
  if (!c.lock) return fail("Lock must not be nil.");
  if (c.lock.identity() === "") return fail("Lock identity is empty");
  return undefined;
}
