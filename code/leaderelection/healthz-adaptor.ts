/**
 * HealthzAdaptor — the `leaderElection` health check: fails when this process holds the lease but
 * has not renewed it for longer than leaseDuration + a tolerance, so the kubelet restarts a leader
 * that is stuck (deadlocked, starved) instead of letting it believe it still leads.
 * Mirrors client-go tools/leaderelection/healthzadaptor.go (HealthzAdaptor,
 * NewLeaderHealthzAdaptor) and LeaderElector.Check in leaderelection.go.
 *
 * @upstream kubernetes/client-go tools/leaderelection/healthzadaptor.go (HealthzAdaptor, Name, Check, SetLeaderElection, NewLeaderHealthzAdaptor)
 * @upstream kubernetes/client-go tools/leaderelection/leaderelection.go (LeaderElector.Check)
 * @chapter 06-leader-election
 *
 * Solves:
 * - the health endpoint is served before the elector exists (the component's flags make both);
 *   the adaptor is made first and handed the elector later, and until then it passes;
 * - a leader whose renew loop should have given up but did not (kubernetes#70819: a deadlock
 *   kept a stale leader alive) is caught from outside: its own last successful renewal is older
 *   than leaseDuration + timeout, which can only happen if the loop is not running.
 *
 * Invariants:
 * - a follower is always healthy (a hot standby has nothing to renew);
 * - the check never writes and never waits: it reads the elector's observed time and its clock.
 */

/** What the adaptor needs of the elector (LeaderElector.check). */
export interface HealthChecked {
  check(maxTolerableExpiredLeaseMs: number): Error | undefined;
}

// #region healthz-adaptor
export class HealthzAdaptor {
  private le: HealthChecked | undefined;

  /** `timeoutMs`: how long past the lease's expiry the check still passes (components use 20 s). */
  constructor(readonly timeoutMs: number) {}

  name(): string {
    return "leaderElection";
  }

  /** undefined when healthy; else upstream's error ("failed election to renew leadership on lease …"). */
  check(): Error | undefined {
    return this.le?.check(this.timeoutMs);
  }

  setLeaderElection(le: HealthChecked): void {
    this.le = le;
  }
}
// #endregion healthz-adaptor

/** NewLeaderHealthzAdaptor. */
export function newLeaderHealthzAdaptor(timeoutMs: number): HealthzAdaptor {
  return new HealthzAdaptor(timeoutMs);
}
