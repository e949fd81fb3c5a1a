/**
 * The decision inside tryAcquireOrRenew — given what this candidate has seen of the lock and when,
 * may it write itself in, and with which record? Pure functions; the I/O is in leader-elector.ts.
 * Upstream keeps this logic inline in client-go tools/leaderelection/leaderelection.go
 * (tryAcquireOrRenew, isLeaseValid, setObservedRecord); we split it out so it reads as a table
 * and can be an exercise.
 *
 * @upstream kubernetes/client-go tools/leaderelection/leaderelection.go (tryAcquireOrRenew, isLeaseValid, setObservedRecord, observedRecord, observedRawRecord, observedTime)
 * @chapter 06-leader-election
 *
 * Solves:
 * - a follower must take over from a dead leader, but never from a live one whose clock is wrong:
 *   so expiry is measured from `observedTime`, the moment *this* candidate (on its own clock) saw
 *   the record's bytes change — never from the `renewTime` the holder wrote with *its* clock. A
 *   holder an hour ahead or behind changes nothing; only a holder that stops writing expires;
 * - a leader keeps its `acquireTime` and `leaderTransitions` on every renewal, and a new holder
 *   bumps `leaderTransitions`, so `kubectl describe lease` counts hand-overs.
 *
 * Invariants:
 * - `observedTime` moves only when the record's bytes differ from the last ones seen (`observe`),
 *   or when we wrote the record ourselves (`observeOwnWrite`);
 * - a lease is valid while observedTime + the *observed* record's leaseDurationSeconds is after
 *   now: the holder says how long it may be silent, our clock says how long it has been;
 * - only three outcomes follow a successful read: wait (someone else holds a valid lease),
 *   renew (we hold it, valid or not), acquire (it is free or expired).
 */
import type { LeaderElectionRecord, ObservedLock } from "./resourcelock/interface.ts";

// #region observation
/** What one candidate knows: the last record it saw, its bytes, and when (on its own clock) it saw them change. */
export interface Observation {
  record: LeaderElectionRecord;
  /** observedRawRecord: the bytes of the last record read; "" before any read. */
  raw: string;
  /** observedTime, in milliseconds on this candidate's clock. */
  time: number;
}

/** The zero observation: nothing seen yet (upstream's zero values; time 0 is long ago). */
export const emptyObservation: Observation = {
  record: { holderIdentity: "", leaseDurationSeconds: 0, acquireTime: 0, renewTime: 0, leaderTransitions: 0 },
  raw: "",
  time: 0,
};

/**
 * A read of the lock at `now`: new bytes mean someone wrote the record, so the clock restarts;
 * the same bytes mean nobody did, and the old observedTime stands.
 */
export function observe(prev: Observation, got: ObservedLock, now: number): Observation {
  if (prev.raw === got.raw) return prev;
  return { record: got.record, raw: got.raw, time: now };
}

/** setObservedRecord after our own write: the record and the time move, the bytes stay as last read. */
export function observeOwnWrite(prev: Observation, record: LeaderElectionRecord, now: number): Observation {
  return { record, raw: prev.raw, time: now };
}
// #endregion observation

// #region lease-valid
/** isLeaseValid: observedTime + the observed leaseDurationSeconds is still after now. */
export function isLeaseValid(obs: Observation, now: number): boolean {
  return obs.time + obs.record.leaseDurationSeconds * 1000 > now;
}

/** The other side of isLeaseValid: a candidate may take over an expired lease. */
export function isLeaseExpired(obs: Observation, now: number): boolean {
  return !isLeaseValid(obs, now);
}
// #endregion lease-valid

/** IsLeader: the last record we observed names us. */
export function isLeader(obs: Observation, identity: string): boolean {
  return obs.record.holderIdentity === identity;
}

/** The record a candidate writes to take or keep the lock at `now` (before step 4 corrects it). */
export function desiredRecord(
  identity: string,
  leaseDurationSeconds: number,
  now: number,
): LeaderElectionRecord {
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: now,
    renewTime: now,
    leaderTransitions: 0,
  };
}

/**
 * Step 1, the fast path: a leader whose lease is still valid writes without reading first,
 * assuming the record it wrote last is still the current one (a 409 sends it to the slow path).
 * `leaseValid` is isLeaseValid's answer (the elector passes the one it was built with).
 */
export function canRenewOptimistically(
  obs: Observation,
  now: number,
  identity: string,
  leaseValid = isLeaseValid(obs, now),
): boolean {
  return isLeader(obs, identity) && leaseValid;
}

export type Decision =
  /** Someone else holds a lease that has not expired: try again after retryPeriod. */
  | { action: "wait"; holder: string }
  /** We hold it: write a new renewTime, keep acquireTime and leaderTransitions. */
  | { action: "renew"; record: LeaderElectionRecord }
  /** Nobody holds it, or its holder went silent for longer than its lease: take it. */
  | { action: "acquire"; record: LeaderElectionRecord };

// #region decide
/**
 * Steps 3 and 4 of tryAcquireOrRenew, after a successful read (`obs` already includes it):
 *
 * | observed holder | lease (by observedTime) | decision                          |
 * |-----------------|-------------------------|-----------------------------------|
 * | another         | valid                   | wait                              |
 * | another         | expired                 | acquire, leaderTransitions + 1    |
 * | "" (released)   | any                     | acquire, leaderTransitions + 1    |
 * | us              | any                     | renew, acquireTime + transitions kept |
 *
 * `leaseValid` is isLeaseValid(obs, now); the elector passes the one it was built with.
 */
export function decideAcquireOrRenew(
  obs: Observation,
  now: number,
  identity: string,
  leaseDurationSeconds: number,
  leaseValid = isLeaseValid(obs, now),
): Decision {
  const held = obs.record;
  if (held.holderIdentity !== "" && leaseValid && !isLeader(obs, identity)) {
    return { action: "wait", holder: held.holderIdentity };
  }
  const record = desiredRecord(identity, leaseDurationSeconds, now);
  if (isLeader(obs, identity)) {
    return {
      action: "renew",
      record: { ...record, acquireTime: held.acquireTime, leaderTransitions: held.leaderTransitions },
    };
  }
  return { action: "acquire", record: { ...record, leaderTransitions: held.leaderTransitions + 1 } };
}
// #endregion decide
