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
 * Invariants: durations are milliseconds (the `Ms` suffix says so); one type for every component
 * (the scheduler's `--config`, both binaries' flags); a zero (or absent) duration is replaced by its default,
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
  /** `--leader-elect-lease-duration`. */
  leaseDurationMs: number;
  /** `--leader-elect-renew-deadline`. */
  renewDeadlineMs: number;
  /** `--leader-elect-retry-period`. */
  retryPeriodMs: number;
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
    leaseDurationMs: c.leaseDurationMs || defaultLeaseDuration,
    renewDeadlineMs: c.renewDeadlineMs || defaultRenewDeadline,
    retryPeriodMs: c.retryPeriodMs || defaultRetryPeriod,
    resourceLock: c.resourceLock || "leases",
    resourceName: c.resourceName ?? "",
    resourceNamespace: c.resourceNamespace ?? "",
  };
}

/**
 * What kube-scheduler (its NewOptions) and kube-controller-manager (its generic defaults) set for
 * themselves before the recommended defaults: a Lease in kube-system named after the component.
 */
export function defaultLeaderElectionConfiguration(resourceName: string): LeaderElectionConfiguration {
  return recommendedDefaultLeaderElectionConfiguration({ resourceName, resourceNamespace: "kube-system" });
}
// #endregion configuration
