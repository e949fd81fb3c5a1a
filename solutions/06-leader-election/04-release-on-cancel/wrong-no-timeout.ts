// Mistake: the release write has no deadline. Plausible: "it is one small update on the way out".
// But the API server may be unreachable — that may be why we are shutting down — and a request
// nobody aborts can wait forever: `run` never returns, onStoppedLeading never runs, and the
// process hangs on exit instead of leaving the lease to expire.
import {
  isLeader,
  type Observation,
  observeOwnWrite,
} from "../../../code/leaderelection/acquire-or-renew.ts";
import type { ReleaseParams } from "../../../code/leaderelection/leader-elector.ts";
import type { LeaderElectionRecord } from "../../../code/leaderelection/resourcelock/interface.ts";

export async function release({ observed, lock, clock }: ReleaseParams): Promise<Observation> {
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
  await lock.update(record);
  return observeOwnWrite(observed, record, clock.now());
}
