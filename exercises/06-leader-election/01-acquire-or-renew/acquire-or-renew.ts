/**
 * Exercise: tryAcquireOrRenew's decision — after reading the lock, may this candidate write
 * itself in, and with which record? Return `wait` (someone else holds a valid lease), `renew`
 * (we hold it) or `acquire` (it is free or expired). README.md has the table.
 *
 * `obs` already includes the read; `leaseValid` says whether its lease is still valid at `now`
 * (by observed time — exercise 2 writes that part). The test runs your function inside the
 * course's real LeaderElector, against a real API server.
 */
import {
  type Decision,
  isLeaseValid,
  type Observation,
} from "../../../code/leaderelection/acquire-or-renew.ts";

export function decideAcquireOrRenew(
  obs: Observation,
  now: number,
  identity: string,
  leaseDurationSeconds: number,
  leaseValid = isLeaseValid(obs, now),
): Decision {
  throw new Error(
    `TODO: decideAcquireOrRenew(holder ${obs.record.holderIdentity}, ${now}, ${identity}, ${leaseDurationSeconds}, ${leaseValid})`,
  );
}
