// Mistake: the released record is written whether or not the last record observed names us.
// Plausible: "releaseOnCancel is set and we are shutting down, so release". But a leader that lost
// the lock — another candidate took it while this one was cut off — then clears its successor's
// record, and the next candidate to try takes over from a live leader: two leaders.
import { type Observation, observeOwnWrite } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ReleaseParams } from "../../../code/leaderelection/leader-elector.ts";
import type { LeaderElectionRecord } from "../../../code/leaderelection/resourcelock/interface.ts";

export async function release({ observed, lock, clock, renewDeadline }: ReleaseParams): Promise<Observation> {
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
  return observeOwnWrite(observed, record, clock.now());
}
