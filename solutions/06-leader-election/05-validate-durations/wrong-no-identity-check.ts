// Mistake: a lock is required but its identity is not checked. Plausible: "the lock is there, the
// elector can run". But every candidate with an empty identity is the same candidate: two replicas
// would each read the record as their own and both renew it — two leaders, both sure of it.
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
  if (leaseDuration <= renewDeadline) return fail("leaseDuration must be greater than renewDeadline");
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
  return undefined;
}
