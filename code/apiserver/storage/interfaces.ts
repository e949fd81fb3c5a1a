/**
 * storage.Interface — what the registry needs from a store of objects, whatever holds them.
 * That may be our embedded store, a real etcd, or the watch cache in front of either.
 * Upstream: k8s.io/apiserver pkg/storage/interfaces.go.
 *
 * Solves:
 * - the registry (REST handlers) speaks objects and resourceVersions, never etcd requests: create
 *   if absent, read, list with a selector and a page size, update only if unchanged, delete,
 *   and watch from a resourceVersion;
 * - one interface, several implementations: etcd3 over an embedded store or a gRPC endpoint,
 *   and the cacher that serves `resourceVersion=0` lists and fans one watch out to many.
 *
 * Invariants:
 * - every object returned carries `metadata.resourceVersion` = the revision of its last write;
 *   every list carries the store revision it was read at;
 * - failures are StatusErrors with upstream's reasons (NotFound, AlreadyExists, Conflict,
 *   Expired for a compacted revision).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/interfaces.go (Interface, Preconditions, ListOptions, GetOptions, UpdateFunc)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/selection_predicate.go (SelectionPredicate)
 * @chapter 02-apiserver
 */
import type { KubeObject, WatchEventType } from "../../api/meta.ts";
import type { CachingObject } from "./caching-object.ts";

/** Which objects a list or watch wants: upstream's SelectionPredicate, reduced to a test. */
export interface SelectionPredicate {
  /** True when the object matches the request's label and field selectors. */
  matches(obj: KubeObject): boolean;
  /** True when the predicate matches everything (lets a store skip the test). */
  readonly empty: boolean;
  /**
   * The value a field selector requires of `field` (`spec.nodeName=n1` → "n1"), if it requires
   * exactly one (upstream's MatcherIndex): the cacher sizes such a watch's buffer by it.
   */
  matcherValue?(field: string): string | undefined;
}

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface GetOptions {
  /** "" = the newest (a quorum read); "0" = anything (the cache may answer); N = at least N. */
  resourceVersion?: string;
  ignoreNotFound?: boolean;
}

export interface ListOptions {
  resourceVersion?: string;
  /** "NotOlderThan" | "Exact" — how `resourceVersion` is read (unset: NotOlderThan for "0", else legacy). */
  resourceVersionMatch?: "" | "NotOlderThan" | "Exact";
  predicate: SelectionPredicate;
  /** Page size; 0 = everything. */
  limit?: number;
  /** The continue token of the previous page. */
  continue?: string;
  /** List everything under the key (a prefix) rather than the one key. */
  recursive: boolean;
}

export interface ListResult {
  items: KubeObject[];
  /** The store revision the list was read at, as a decimal string. */
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface WatchOptions {
  /** "" / "0": start with the current state as ADDED events; N: every change after N. */
  resourceVersion?: string;
  predicate: SelectionPredicate;
  recursive: boolean;
  /** Send BOOKMARK events (objects of the right kind carrying only a resourceVersion). */
  allowWatchBookmarks?: boolean;
  /**
   * When the server will end this watch (epoch ms; from `timeoutSeconds`). The watch cache sends
   * a last BOOKMARK 2 s before it, so the client can resume from there.
   */
  deadline?: number;
}

export interface StorageWatchEvent {
  type: WatchEventType;
  /** For ERROR, a Status object. For BOOKMARK, an object with only metadata.resourceVersion. */
  object: KubeObject;
  /**
   * Set by the watch cache: `object` is shared by every watcher and frozen, and this caches its
   * encodings so a handler serialises the event once, not once per watcher.
   */
  cachingObject?: CachingObject;
}

/** A running watch: events arrive in revision order; `stop()` ends it (idempotent). */
export interface Watch extends AsyncIterable<StorageWatchEvent> {
  stop(): void;
}

/**
 * Given the current object (undefined when it does not exist and ignoreNotFound was set),
 * return the object to write. Throwing aborts the update with that error.
 */
export type UpdateFunc = (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>;

/** guaranteedUpdate's options. */
export interface GuaranteedUpdateOptions {
  preconditions?: Preconditions;
  ignoreNotFound?: boolean;
  /**
   * upstream's cachedExistingObject: the object as the watch cache holds it (read-only), a first
   * guess that saves the read. A stale guess costs nothing but the lost txn, whose failure
   * branch reads the current object anyway.
   */
  cachedExistingObject?: KubeObject;
}

export interface Interface {
  create(key: string, obj: KubeObject): Promise<KubeObject>;
  /** Deletes if the preconditions hold; `validateDeletion` sees the current object first. */
  delete(
    key: string,
    preconditions?: Preconditions,
    validateDeletion?: (current: KubeObject) => void | Promise<void>,
  ): Promise<KubeObject>;
  watch(key: string, opts: WatchOptions): Promise<Watch>;
  get(key: string, opts?: GetOptions): Promise<KubeObject | undefined>;
  getList(key: string, opts: ListOptions): Promise<ListResult>;
  /**
   * Read, call tryUpdate, write if the object has not changed since the read; on a lost race,
   * read again and retry (the caller's preconditions are checked on every try).
   */
  guaranteedUpdate(key: string, opts: GuaranteedUpdateOptions, tryUpdate: UpdateFunc): Promise<KubeObject>;
  /** The store's current revision (for list resourceVersion and bookmarks). */
  currentResourceVersion(): Promise<string>;
  close(): Promise<void>;
}
