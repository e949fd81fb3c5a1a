// Mistake: the record is written but the observation is returned unchanged. Plausible: "the
// process is exiting, what it remembers no longer matters". But the elector goes on answering:
// IsLeader and GetLeader still name us after we gave the lock up, and a health check or a caller
// asking "am I the leader?" during shutdown gets the wrong answer.
import { isLeader, type Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
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
    leaderTransitions: observed.record.leaderTransitions, // the next holder counts the hand-over
  };
  // A shutdown must end: the write gets renewDeadline, like a renewal.
  const ctx = new AbortController();
  const timer = clock.afterFunc(renewDeadline, () => ctx.abort("context deadline exceeded"));
  try {
    await lock.update(record, ctx.signal);
  } finally {
    timer.stop();
  }
  return observed;
}
