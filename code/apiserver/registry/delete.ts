/**
 * Graceful deletion — what a delete does before anything is removed: check the client's
 * preconditions, decide whether the object goes now, after a grace period, or after its
 * finalizers, and which finalizers the garbage collector adds. Upstream: rest.BeforeDelete in
 * k8s.io/apiserver pkg/registry/rest/delete.go, and the deletion helpers of the generic store
 * (pkg/registry/generic/registry/store.go).
 *
 * Solves:
 * - `kubectl delete pod web` must not kill a running container abruptly: the pod's strategy asks
 *   for a grace period, the object is only marked (deletionTimestamp, deletionGracePeriodSeconds),
 *   and the kubelet finishes the job; a second delete may shorten the wait, never lengthen it;
 * - an object with finalizers waits for them: it is marked, and the update that removes the last
 *   one deletes it;
 * - `propagationPolicy` (or the old `orphanDependents`) is the garbage collector's business: it
 *   becomes the `orphan` or `foregroundDeletion` finalizer, which then holds the object.
 *
 * Invariants:
 * - a failed precondition is a Conflict naming the kind (`ConfigMap "x"`), checked against the
 *   object as read, before anything is marked (the storage checks again at the write);
 * - `beforeDelete` settles `options.gracePeriodSeconds` (a negative one means 1 s) and never
 *   writes anything.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go (BeforeDelete)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go (deletionFinalizersForGarbageCollection, shouldDeleteDuringUpdate, markAsDeleting)
 * @upstream kubernetes/kubernetes pkg/registry/core/namespace/storage/storage.go (REST.Delete: a namespace with spec.finalizers terminates first)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { type GroupResource, newConflict } from "../errors.ts";
import type { Preconditions } from "../storage/interfaces.ts";
import type { RESTStrategy } from "./strategy.ts";

/** What a client may say about a delete (body or query): upstream's metav1.DeleteOptions. */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  orphanDependents?: boolean;
  dryRun?: string[];
}

// #region before-delete
/**
 * rest.BeforeDelete: the preconditions, then graceful or not. `graceful`: mark the object with a
 * deletionTimestamp `options.gracePeriodSeconds` from now. `pending`: a graceful delete is already
 * under way and this one changes nothing. Neither: delete now (or once the finalizers are gone).
 * `kind` names the object in a precondition's Conflict (upstream uses the kind, not the resource).
 */
export function beforeDelete(
  strategy: RESTStrategy,
  obj: KubeObject,
  options: DeleteOptions,
  kind: GroupResource,
): { graceful: boolean; pending: boolean } {
  const meta = obj.metadata;
  const pre = options.preconditions;
  const name = meta.name ?? "";
  if (pre?.uid && pre.uid !== meta.uid) {
    throw newConflict(
      kind,
      name,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${meta.uid}). The object might have been deleted and then recreated`,
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
    throw newConflict(
      kind,
      name,
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${meta.resourceVersion}). The object might have been modified`,
    );
  }
  if (options.gracePeriodSeconds !== undefined && options.gracePeriodSeconds < 0) {
    options.gracePeriodSeconds = 1; // upstream: a negative grace period means the minimum, 1s
  }
  if (meta.deletionTimestamp) {
    const current = meta.deletionGracePeriodSeconds ?? 0;
    // Grace period over: only finalizers can hold it now (the caller checks), or nothing — the
    // update that marked it committed and the delete after it failed. Upstream deletes it then.
    if (current === 0) return { graceful: false, pending: false };
    // Still in its grace period: only a shorter one changes anything.
    if (options.gracePeriodSeconds === undefined || options.gracePeriodSeconds >= current) {
      return { graceful: false, pending: true };
    }
    return { graceful: options.gracePeriodSeconds > 0, pending: false };
  }
  const graceful = strategy.checkGracefulDelete?.(obj, options) ?? false;
  if (!graceful) return { graceful: false, pending: false };
  return { graceful: (options.gracePeriodSeconds ?? 0) > 0, pending: false };
}
// #endregion before-delete

/** deletionFinalizersForGarbageCollection: Orphan and Foreground leave a finalizer for the garbage collector. */
export function deletionFinalizersForGarbageCollection(obj: KubeObject, options: DeleteOptions): string[] {
  const set = new Set(obj.metadata.finalizers ?? []);
  const policy =
    options.propagationPolicy ??
    (options.orphanDependents === true
      ? "Orphan"
      : options.orphanDependents === false
        ? "Background"
        : undefined);
  if (policy === "Orphan") {
    set.add("orphan");
    set.delete("foregroundDeletion");
  } else if (policy === "Foreground") {
    set.add("foregroundDeletion");
    set.delete("orphan");
  } else if (policy === "Background") {
    set.delete("orphan");
    set.delete("foregroundDeletion");
  }
  return [...set];
}

/** shouldDeleteDuringUpdate: an update that removes the last finalizer of an object whose deletion is due deletes it. */
export function shouldDeleteDuringUpdate(obj: KubeObject, old: KubeObject): boolean {
  return (
    (obj.metadata.finalizers ?? []).length === 0 &&
    old.metadata.deletionTimestamp !== undefined &&
    old.metadata.deletionGracePeriodSeconds === 0
  );
}

/** A namespace with spec.finalizers is emptied by the namespace controller before it goes. */
export function hasNamespaceFinalizers(resource: string, obj: KubeObject): boolean {
  if (resource !== "namespaces") return false;
  const spec = obj.spec as { finalizers?: string[] } | undefined;
  return (spec?.finalizers ?? []).length > 0;
}
