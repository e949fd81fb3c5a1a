/**
 * Exercise: NewLeaderElector's validation — the checks that keep an election safe, in upstream's
 * order, with upstream's messages word for word. Return the first that fails, as a
 * LeaderElectionConfigError, or undefined when the config may run. README.md has the list.
 */
import {
  type LeaderElectionConfig,
  LeaderElectionConfigError,
} from "../../../code/leaderelection/leader-elector.ts";

export function validateLeaderElectionConfig(
  c: Partial<LeaderElectionConfig>,
): LeaderElectionConfigError | undefined {
  throw new Error(
    `TODO: validateLeaderElectionConfig(${c.leaseDuration}/${c.renewDeadline}/${c.retryPeriod}) — ${LeaderElectionConfigError.name}`,
  );
}
