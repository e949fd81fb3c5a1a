/**
 * LeaderElectionConfiguration — the `leaderElection` block every core component's config has,
 * and the defaults they start from: 15 s lease, 10 s renew deadline, 2 s retry period.
 * Mirrors component-base config/types.go (LeaderElectionConfiguration) and
 * config/v1alpha1/defaults.go (RecommendedDefaultLeaderElectionConfiguration).
 *
 * @upstream kubernetes/component-base config/types.go (LeaderElectionConfiguration)
 * @upstream kubernetes/component-base config/v1alpha1/defaults.go (RecommendedDefaultLeaderElectionConfiguration)
 * @upstream kubernetes/component-base config/options/leaderelectionconfig.go (BindLeaderElectionFlags)
 * @chapter 06-leader-election
 *
 * Solves: kube-scheduler and kube-controller-manager take the same six `--leader-elect*` flags
 * with the same defaults; one type and one defaulting function keep them from drifting.
 *
 * Invariants: durations are milliseconds; a zero (or absent) duration is replaced by its default,
 * as upstream replaces the zero metav1.Duration.
 *
 * What upstream does differently: component-base's own default lock is still `endpoints` in
 * 1.32 (a TODO), and each component sets `leases` — and its own resource name and namespace —
 * before calling the recommended defaults; we default `resourceLock` to `leases` directly.
 */

// #region configuration
export interface LeaderElectionConfiguration {
  /** `--leader-elect`: run the election before the main loop (default true). */
  leaderElect: boolean;
  /** `--leader-elect-lease-duration`, ms. */
  leaseDuration: number;
  /** `--leader-elect-renew-deadline`, ms. */
  renewDeadline: number;
  /** `--leader-elect-retry-period`, ms. */
  retryPeriod: number;
  /** `--leader-elect-resource-lock`: only `leases` is left. */
  resourceLock: string;
  /** `--leader-elect-resource-name`: `kube-scheduler`, `kube-controller-manager`. */
  resourceName: string;
  /** `--leader-elect-resource-namespace`: `kube-system`. */
  resourceNamespace: string;
}

export const defaultLeaseDuration = 15_000;
export const defaultRenewDeadline = 10_000;
export const defaultRetryPeriod = 2_000;

/** RecommendedDefaultLeaderElectionConfiguration: fills what `c` leaves unset (or zero). */
export function recommendedDefaultLeaderElectionConfiguration(
  c: Partial<LeaderElectionConfiguration> = {},
): LeaderElectionConfiguration {
  return {
    leaderElect: c.leaderElect ?? true,
    leaseDuration: c.leaseDuration || defaultLeaseDuration,
    renewDeadline: c.renewDeadline || defaultRenewDeadline,
    retryPeriod: c.retryPeriod || defaultRetryPeriod,
    resourceLock: c.resourceLock || "leases",
    resourceName: c.resourceName ?? "",
    resourceNamespace: c.resourceNamespace ?? "",
  };
}
// #endregion configuration
