/**
 * namespaces/finalize — `PUT /api/v1/namespaces/{name}/finalize`: the one write that may change a
 * namespace's `spec.finalizers`. Upstream: `FinalizeREST` in kubernetes
 * pkg/registry/core/namespace/storage/storage.go.
 *
 * Solves: a terminating namespace waits for its `kubernetes` finalizer; the namespace controller
 * removes it here once it has emptied the namespace. A plain update cannot (the namespace
 * strategy keeps the stored finalizers), so a user's `kubectl apply` of a namespace never
 * short-circuits the clean-up.
 *
 * Invariants:
 * - the update is the namespace store's, with the finalize strategy (namespaces.ts): the stored
 *   status is kept, the body's finalizers are validated (ValidateNamespaceFinalizeUpdate) and written;
 * - a finalize never creates a namespace (upstream passes forceAllowCreate=false).
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/namespace/storage/storage.go (FinalizeREST.Update)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { Store, UpdatedObjectFunc } from "../store.ts";
import { namespaceFinalizeStrategy } from "../strategies/namespaces.ts";

// #region finalize
/** FinalizeREST.Update: the namespace store's update, through the finalize strategy. */
export function updateFinalize(
  namespaces: Store,
  name: string,
  updated: UpdatedObjectFunc,
  opts: { dryRun?: boolean } = {},
): Promise<{ obj: KubeObject; created: boolean }> {
  return namespaces.update("", name, updated, { strategy: namespaceFinalizeStrategy, dryRun: opts.dryRun });
}
// #endregion finalize
