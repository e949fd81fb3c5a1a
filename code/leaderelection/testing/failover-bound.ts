/**
 * How long a kill -9 of the leader can leave a Lease without an acting leader, in theory — the
 * figures the leader-election benchmark prints beside what it measured.
 * Mirrors kubernetes/client-go tools/leaderelection/leaderelection.go.
 *
 * Solves: "failover takes about leaseDuration" is the folklore; the exact window follows from
 * four facts of client-go v0.32 (tools/leaderelection/leaderelection.go and resourcelock/):
 *
 * 1. A follower's lease clock restarts when it *reads* bytes that differ from the last bytes it
 *    read (tryAcquireOrRenew → setObservedRecord: observedTime = now, after the Get) — not when
 *    the leader wrote them. Its reads are a JitterUntil loop, sliding: each try, then a wait of
 *    retryPeriod × [1, 1 + JitterFactor) (JitterFactor = 1.2). So it sees a change up to
 *    g = retryPeriod × (1 + JitterFactor) after it lands (plus one request's time).
 * 2. It may take over at the first try that starts once observedTime + leaseDurationSeconds is
 *    no longer after now (isLeaseValid): one more gap g, at most.
 * 3. The bytes compared are json.Marshal(LeaderElectionRecord), whose renewTime is a metav1.Time
 *    — whole seconds. With retryPeriod ≥ 1 s every renewal changes them; below 1 s only the
 *    first renewal in each new second does, so the last change B may lie up to
 *    1 s + retryPeriod before the last renewal's successor would have come.
 * 4. leaseDurationSeconds is int(leaseDuration / 1 s): the Lease carries whole seconds
 *    (Lease validation refuses 0), and the follower waits what the *record* says.
 *
 * So with K the kill and B ≤ K the last change of the bytes before it:
 *   takeover ≤ B + g + leaseDurationSeconds + g  ⇒  failover ≤ leaseDurationSeconds + 2g;
 *   takeover > B + leaseDurationSeconds, and K − B < Δ, where Δ = retryPeriod if retryPeriod
 *   ≥ 1 s, else 1 s + retryPeriod  ⇒  failover > leaseDurationSeconds − Δ.
 * (Each side plus a few requests' time: the read, the Lease write, the first action's write.)
 * The same facts say when a *live* leader can be taken over: a follower sees changes at most
 * Δ + g apart, so leaseDurationSeconds must exceed Δ + g, or followers will now and then find a
 * lease expired that its holder is still renewing.
 *
 * Invariants: all figures in milliseconds; the bound is for one follower and so for any number
 * (the first of several to take over is never later than the worst one).
 *
 * @upstream kubernetes/client-go tools/leaderelection/leaderelection.go (JitterFactor, acquire: wait.JitterUntil sliding; tryAcquireOrRenew; isLeaseValid; setObservedRecord)
 * @upstream kubernetes/client-go tools/leaderelection/resourcelock/leaselock.go (Get: json.Marshal of the record)
 * @upstream kubernetes/client-go tools/leaderelection/resourcelock/interface.go (LeaderElectionRecord: RenewTime metav1.Time)
 * @chapter 06-leader-election
 */
import { JitterFactor } from "../leader-elector.ts";

/** One duration triple, in milliseconds. */
export interface Durations {
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
}

export interface FailoverBound {
  /** int(leaseDuration / 1 s), in ms: what the Lease says and the followers wait. */
  leaseDurationSeconds: number;
  /** g: the longest gap between two tries of one follower. */
  followerGap: number;
  /** Δ: the longest time the record's bytes can stay the same while its holder renews. */
  unchangedBytes: number;
  /** failover > this (0 if the formula goes below). */
  lower: number;
  /** failover ≤ this. */
  upper: number;
  /** leaseDurationSeconds > Δ + g: a live leader is never taken over. */
  liveLeaderSafe: boolean;
}

// #region failover-bound
export function failoverBound(d: Durations): FailoverBound {
  const leaseDurationSeconds = Math.floor(d.leaseDuration / 1000) * 1000;
  const followerGap = d.retryPeriod * (1 + JitterFactor);
  const unchangedBytes = d.retryPeriod >= 1000 ? d.retryPeriod : 1000 + d.retryPeriod;
  return {
    leaseDurationSeconds,
    followerGap,
    unchangedBytes,
    lower: Math.max(0, leaseDurationSeconds - unchangedBytes),
    upper: leaseDurationSeconds + 2 * followerGap,
    liveLeaderSafe: leaseDurationSeconds > unchangedBytes + followerGap,
  };
}
// #endregion failover-bound

/**
 * What an idle election costs the API server, on average: the leader renews (one PUT) every
 * retryPeriod — wait.Until, no jitter; each follower reads (one GET) every retryPeriod ×
 * (1 + JitterFactor / 2), the mean of its jittered wait. Requests' own time makes both a bit rarer.
 */
export function expectedIdleRates(d: Durations): { leaderWritesPerSec: number; followerReadsPerSec: number } {
  return {
    leaderWritesPerSec: 1000 / d.retryPeriod,
    followerReadsPerSec: 1000 / (d.retryPeriod * (1 + JitterFactor / 2)),
  };
}
