/**
 * Lease strategy — the lock object of leader election and node heartbeats.
 * Upstream: kubernetes pkg/registry/coordination/lease/strategy.go.
 *
 * Solves:
 * - a candidate that finds no Lease creates it with a PUT it would use anyway to renew, so a
 *   PUT may create (AllowCreateOnUpdate);
 * - two candidates must never both believe they won: an update *must* carry the
 *   resourceVersion it read (AllowUnconditionalUpdate is false), so the second writer gets a
 *   409 Conflict instead of silently overwriting the first.
 *
 * Invariants:
 * - spec.strategy and spec.preferredHolder (CoordinatedLeaderElection, alpha and off in v1.32)
 *   are dropped on create, and on update unless the stored Lease already had them.
 *
 * @upstream kubernetes/kubernetes pkg/registry/coordination/lease/strategy.go (leaseStrategy, dropDisabledFields)
 * @chapter 02-apiserver
 */
import type { Lease } from "../../../api/coordination.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy } from "./helpers.ts";

type LeaseSpecExtras = { strategy?: string; preferredHolder?: string };

// #region lease-strategy
function dropDisabledFields(obj: KubeObject, old: KubeObject | undefined): void {
  const spec = (obj as Lease).spec as LeaseSpecExtras | undefined;
  if (!spec) return;
  const oldSpec = (old as Lease | undefined)?.spec as LeaseSpecExtras | undefined;
  if (oldSpec?.preferredHolder === undefined) delete spec.preferredHolder;
  if (oldSpec?.strategy === undefined) delete spec.strategy;
}

export const leaseStrategy: RESTStrategy = {
  ...baseStrategy(true),
  prepareForCreate: (obj) => dropDisabledFields(obj, undefined),
  prepareForUpdate: (obj, old) => dropDisabledFields(obj, old),
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
};
// #endregion lease-strategy
