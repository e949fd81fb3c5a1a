// Mistake: the "greater than zero" checks come first, the comparisons after. Plausible: check each
// value before comparing them — it reads tidier. But upstream compares first, so a config with
// several faults is reported by its comparison (`leaseDuration must be greater than renewDeadline`
// for 0/0/0), and a component's error message, which operators search for, differs from upstream's.
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
  if (leaseDuration <= 0) return fail("leaseDuration must be greater than zero");
  if (renewDeadline <= 0) return fail("renewDeadline must be greater than zero");
  if (retryPeriod <= 0) return fail("retryPeriod must be greater than zero");
  if (leaseDuration <= renewDeadline) return fail("leaseDuration must be greater than renewDeadline");
  if (renewDeadline <= JitterFactor * retryPeriod) {
    return fail("renewDeadline must be greater than retryPeriod*JitterFactor");
  }
  if (!c.callbacks?.onStartedLeading) return fail("OnStartedLeading callback must not be nil");
  if (!c.callbacks?.onStoppedLeading) return fail("OnStoppedLeading callback must not be nil");
  if (!c.lock) return fail("Lock must not be nil.");
  if (c.lock.identity() === "") return fail("Lock identity is empty");
  return undefined;
}
