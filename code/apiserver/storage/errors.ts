/**
 * Storage errors — the storage layer's failures, already in the words the API server sends.
 * Upstream: k8s.io/apiserver pkg/storage/errors.go and etcd3/errors.go, as the registry's
 * pkg/storage/errors/storage.go interprets them.
 *
 * Solves:
 * - upstream's storage returns StorageErrors (key not found, key exists, invalid object …) that
 *   the registry turns into API errors (storeerr.InterpretGetError and friends); our storage
 *   speaks StatusErrors directly, so those two steps are folded into the functions here, and the
 *   messages come out as a client of kube-apiserver v1.32 reads them;
 * - a failed precondition is a Conflict whose message quotes the StorageError text verbatim —
 *   `Operation cannot be fulfilled on pods "web": StorageError: invalid object, Code: 4, Key:
 *   /registry/pods/default/web, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID
 *   in precondition: 1, UID in object meta: 2` — because that is what upstream prints.
 *
 * - a compacted revision (etcd's "mvcc: required revision has been compacted") is a 410 Gone, reason Expired
 *   for a list or a watch, in the etcd3 store's words (interpretListError, interpretWatchError).
 *
 * Invariants:
 * - every function returns (never throws) its error, with upstream's reason, code and message.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/errors.go (StorageError, NewInvalidObjError, NewTooLargeResourceVersionError, ErrResourceVersionSetOnCreate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/interfaces.go (Preconditions.Check)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/errors.go (interpretListError, interpretWatchError, handleCompactedErrorForPaging; the expired messages)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/errors/storage.go (InterpretGetError, InterpretUpdateError: InvalidObj → Conflict)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (newErrWatcher)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import {
  type GroupResource,
  isStatusError,
  newConflict,
  newInternalError,
  newResourceExpired,
  newTimeoutError,
  type StatusError,
} from "../errors.ts";
import { encodeContinue } from "./continue.ts";
import { isCompactedError } from "./etcd-client.ts";
import type { Preconditions, StorageWatchEvent, Watch } from "./interfaces.ts";

/**
 * ErrResourceVersionSetOnCreate: a create whose object already has a resourceVersion. Upstream
 * returns it as a plain error, which the handler answers as a 500 with this text (errorToAPIStatus).
 */
export const errResourceVersionSetOnCreate = "resourceVersion should not be set on objects to be created";

// #region expired-messages
/** A list at a resourceVersion that compaction removed. */
export const expiredList = "The resourceVersion for the provided list is too old.";
/** A watch from a resourceVersion that compaction removed (the etcd3 store's wording). */
export const expiredWatch = "The resourceVersion for the provided watch is too old.";
export const continueExpired =
  "The provided continue parameter is too old to display a consistent list result. " +
  "You can start a new list without the continue parameter.";
export const inconsistentContinue =
  "The provided continue parameter is too old to display a consistent list result. " +
  "You can start a new list without the continue parameter, or use the continue token in this " +
  "response to retrieve the remainder of the results. Continuing with the provided token results " +
  "in an inconsistent list - objects that were created, modified, or deleted between the time the " +
  "first chunk was returned and now may show up in the list.";

/** The watch cache's wording: the oldest resourceVersion it can still replay from is `oldest`. */
export function tooOldResourceVersion(requested: number, oldest: number): StatusError {
  return newResourceExpired(`too old resource version: ${requested} (${oldest})`);
}
// #endregion expired-messages

// #region interpret
/**
 * interpretListError: a list at a compacted revision is 410 Gone, reason Expired; a compacted continuation
 * also gets a fresh token, "go on from where you were, at the newest revision".
 */
export function interpretListError(
  e: unknown,
  paging: boolean,
  continueKey: string,
  keyPrefix: string,
): unknown {
  if (!isCompactedError(e)) return e;
  if (!paging) return newResourceExpired(expiredList);
  let token: string;
  try {
    // rv -1: the newest revision — consistent no longer.
    token = encodeContinue(continueKey, keyPrefix, -1);
  } catch {
    return newResourceExpired(continueExpired);
  }
  const err = newResourceExpired(inconsistentContinue);
  err.status.metadata = { continue: token };
  return err;
}

/** interpretWatchError: compaction is 410 Gone, reason Expired; anything else an internal error. */
export function interpretWatchError(e: unknown): StatusError {
  if (isCompactedError(e)) return newResourceExpired(expiredWatch);
  if (isStatusError(e)) return e;
  return newInternalError((e as Error)?.message ?? String(e));
}
// #endregion interpret

/** A Status as the object of an ERROR watch event. */
export function errorEvent(err: StatusError): StorageWatchEvent {
  return { type: "ERROR", object: err.status as unknown as KubeObject };
}

/** newErrWatcher (the cacher's): a watch that sends one ERROR event and ends. */
export function newErrWatcher(err: StatusError): Watch {
  return {
    stop() {},
    async *[Symbol.asyncIterator]() {
      yield errorEvent(err);
    },
  };
}

/** NewTooLargeResourceVersionError: a read that wants a revision the store has not reached. */
export function newTooLargeResourceVersionError(
  minimum: number,
  current: number,
  retrySeconds: number,
): StatusError {
  const err = newTimeoutError(`Too large resource version: ${minimum}, current: ${current}`, retrySeconds);
  err.status.details = {
    ...err.status.details,
    causes: [{ reason: "ResourceVersionTooLarge", message: "Too large resource version" }],
  };
  return err;
}

/** The name part of a key: `/registry/pods/default/web` → `web`. */
export function nameOfKey(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1);
}

// #region preconditions
/**
 * Preconditions.Check: the delete or update goes ahead only if the stored object still has the
 * UID and resourceVersion the client named — "delete the pod I looked at, not one recreated with
 * the same name since". A failure is a Conflict (the registry's InterpretUpdateError).
 */
export function checkPreconditions(
  gr: GroupResource,
  key: string,
  obj: KubeObject | undefined,
  p: Preconditions | undefined,
): StatusError | undefined {
  if (!p) return undefined;
  const uid = obj?.metadata.uid ?? "";
  const rv = obj?.metadata.resourceVersion ?? "";
  let msg: string | undefined;
  if (p.uid !== undefined && p.uid !== uid) {
    msg = `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${uid}`;
  } else if (p.resourceVersion !== undefined && p.resourceVersion !== rv) {
    msg = `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${rv}`;
  }
  if (msg === undefined) return undefined;
  const storageError = `StorageError: invalid object, Code: 4, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${msg}`;
  return newConflict(gr, nameOfKey(key), storageError);
}
// #endregion preconditions
