// Mistake: the release counts as a transition — leaderTransitions + 1 in the released record.
// Plausible: "leadership changed: from me to nobody". But the next holder bumps the count when it
// acquires, so every clean hand-over is counted twice, and `kubectl describe lease` no longer tells
// how many times leadership actually moved.
import {
  isLeader,
  type Observation,
  observeOwnWrite,
} from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ReleaseParams } from "../../../code/leaderelection/leader-elector.ts";
import type { LeaderElectionRecord } from "../../../code/leaderelection/resourcelock/interface.ts";

export async function release({ observed, lock, clock, renewDeadline }: ReleaseParams): Promise<Observation> {
  // Only the holder may clear the lock: a leader that lost it must not wipe out its successor.
  if (!isLeader(observed, lock.identity())) return observed;
  const now = clock.now();
  const record: LeaderElectionRecord = {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: now,
    renewTime: now,
    leaderTransitions: observed.record.leaderTransitions + 1,
  };
  // A shutdown must end: the write gets renewDeadline, like a renewal.
  const ctx = new AbortController();
  const timer = clock.afterFunc(renewDeadline, () => ctx.abort("context deadline exceeded"));
  try {
    await lock.update(record, ctx.signal);
  } finally {
    timer.stop();
  }
  return observeOwnWrite(observed, record, clock.now());
}
