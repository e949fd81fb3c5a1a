// Mistake: the lease may be as long as the deadline (< instead of <=). Plausible: "equal is enough:
// the leader gives up just as the lease runs out". But the follower's leaseDuration runs from when
// it saw the last renewal, the leader's deadline from the round after it: with equal durations the
// follower can take over while the old leader is still leading. Upstream demands strictly greater.
import {
  JitterFactor,
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
  if (leaseDuration < renewDeadline) return fail("leaseDuration must be greater than renewDeadline");
  // …and get more than one jittered retry in before it gives up.
  if (renewDeadline <= JitterFactor * retryPeriod) {
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
