/**
 * Lease (group coordination.k8s.io, version v1) — a named, timed claim that one holder makes
 * and keeps renewing. Leader election (chapter 6) and node heartbeats (chapter 7) are built on it.
 * Upstream: k8s.io/api's coordination/v1/types.go.
 *
 * Solves:
 * - several replicas of the scheduler agree on one leader without talking to each other: each
 *   tries to write itself into `holderIdentity`, and optimistic concurrency (resourceVersion)
 *   lets only one write win;
 * - a node says "I am alive" with a tiny object (`renewTime`) instead of rewriting its whole
 *   status every few seconds.
 *
 * Invariants:
 * - a lease is held while `renewTime + leaseDurationSeconds` is in the future; the API server
 *   does not enforce this — every client computes it (the server only validates that durations
 *   are positive);
 * - `acquireTime` and `renewTime` are MicroTime: RFC 3339 with microseconds
 *   (`2024-01-02T03:04:05.123456Z`).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/coordination/v1/types.go (Lease, LeaseSpec)
 * @chapter 02-apiserver
 */

import type { KubeObject } from "./meta.ts";

// #region lease
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  /** How many times the lease changed hands. */
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}
// #endregion lease
