/**
 * Etcd3Store — storage.Interface over etcd, with etcd's revisions as resourceVersions.
 * Objects are JSON values under `/registry/<resource>/<namespace>/<name>`.
 * Upstream: k8s.io/apiserver pkg/storage/etcd3/store.go. How resourceVersions get in and out of
 * objects is api-object-versioner.ts; one watch's events are etcd3-watcher.ts.
 *
 * Solves:
 * - create only if absent, update only if unchanged since read, delete only the object the
 *   client meant: each is one etcd transaction that compares the key's revision, so two API
 *   servers (or two requests) racing on one object cannot both win;
 * - `resourceVersion` for free: an object's is the `mod_revision` of its key, a list's the
 *   revision it was read at — so "list, then watch from the list's resourceVersion" misses
 *   nothing and repeats nothing;
 * - paged lists that are consistent across pages: every page after the first is read at the
 *   first page's revision (the continue token carries it) until compaction removes it;
 * - watch: from resourceVersion 0 the current state first, then etcd's key events from just after
 *   it, as ADDED / MODIFIED / DELETED of objects (etcd3-watcher.ts).
 *
 * Invariants:
 * - values in etcd never carry `metadata.resourceVersion` (it would be stale the moment it is
 *   written); every object this store returns has it set to the key's `mod_revision`;
 * - keys and prefixes come from the caller, whole (`/registry/pods/default/web`,
 *   `/registry/pods/default`); a recursive read or watch covers `<prefix>/…` only;
 * - errors are StatusErrors (NotFound, AlreadyExists, Conflict, Expired, Timeout, BadRequest),
 *   worded as kube-apiserver words them after its registry has interpreted them.
 *
 * What upstream does differently: objects are stored as protobuf (JSON for custom resources),
 * optionally encrypted by a transformer; GuaranteedUpdate may start from a cached object; Get/
 * GetList count and trace everything; a corrupt object has its own error path.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go (store: Create, Get, GetList, GuaranteedUpdate, Delete, conditionalDelete, getState, notFound, validateMinimumResourceVersion, GetCurrentResourceVersion, Watch)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/watcher.go (watcher.Watch, watchChan.sync: the initial state of a watch from resourceVersion 0)
 * @upstream etcd-io/etcd client/v3/op.go (GetPrefixRangeEnd)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import type { Compare, RangeResponse } from "../../store/etcdserverpb/rpc.ts";
import {
  errorToAPIStatus,
  type GroupResource,
  isStatusError,
  newAlreadyExists,
  newBadRequest,
  newInternalError,
  newNotFound,
} from "../errors.ts";
import {
  decodeObject,
  encodeObject,
  parseResourceVersion,
  withResourceVersion,
} from "./api-object-versioner.ts";
import { decodeContinue, encodeContinue } from "./continue.ts";
import {
  checkPreconditions,
  errResourceVersionSetOnCreate,
  interpretListError,
  nameOfKey,
  newTooLargeResourceVersionError,
} from "./errors.ts";
import { type EtcdClient, isCompactedError, isFutureRevError } from "./etcd-client.ts";
import { WatchChan } from "./etcd3-watcher.ts";
import type {
  GetOptions,
  GuaranteedUpdateOptions,
  Interface,
  ListOptions,
  ListResult,
  Preconditions,
  StorageWatchEvent,
  UpdateFunc,
  Watch,
  WatchOptions,
} from "./interfaces.ts";

export interface Etcd3StoreOptions {
  client: EtcdClient;
  /** Names the resource in error messages (`pods "web" not found`). */
  groupResource: GroupResource;
  /** An empty object of the resource's kind, for BOOKMARK events (default: metadata only). */
  newFunc?: () => KubeObject;
  /**
   * Ours: while a watch with bookmarks is open, ask etcd for a progress notification this
   * often (0 = never; then bookmarks come only from etcd's own progress-notify interval).
   */
  progressRequestIntervalMs?: number;
}

/** Upstream's cap on how many keys one range of a paged, filtered list may ask for. */
const maxLimit = 10000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const bytes = (s: string): Uint8Array => encoder.encode(s);
const text = (b: Uint8Array): string => decoder.decode(b);

// #region keys
/** clientv3.GetPrefixRangeEnd: the first key after every key that starts with `prefix`. */
export function prefixRangeEnd(prefix: Uint8Array): Uint8Array {
  const end = Uint8Array.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.slice(0, i + 1);
    }
  }
  return new Uint8Array([0]); // every byte 0xff: to the end of the keyspace
}
// #endregion keys

/** What a key held when we last read it: the object, its mod_revision and its exact bytes. */
interface ObjState {
  obj?: KubeObject;
  rev: number;
  data?: string;
}

export class Etcd3Store implements Interface {
  private readonly client: EtcdClient;
  private readonly gr: GroupResource;
  private readonly newFunc: () => KubeObject;
  private readonly progressRequestIntervalMs: number;
  private readonly watches = new Set<Watch>();

  constructor(opts: Etcd3StoreOptions) {
    this.client = guardClient(opts.client);
    this.gr = opts.groupResource;
    this.newFunc = opts.newFunc ?? (() => ({ metadata: {} }));
    this.progressRequestIntervalMs = opts.progressRequestIntervalMs ?? 0;
  }

  // #region create
  /**
   * One txn: "if the key does not exist (its mod_revision is 0), put it" — of two creates of one
   * name, etcd lets exactly one through; the other is AlreadyExists.
   */
  async create(key: string, obj: KubeObject): Promise<KubeObject> {
    if (obj.metadata?.resourceVersion) {
      throw errorToAPIStatus(errResourceVersionSetOnCreate);
    }
    const data = encodeObject(obj);
    const resp = await this.client.txn({
      compare: [notFound(key)],
      success: [{ requestPut: { key: bytes(key), value: bytes(data) } }],
      failure: [],
    });
    if (!resp.succeeded) throw newAlreadyExists(this.gr, nameOfKey(key));
    // Upstream decodes `data` again; the object it came from serves, with its revision.
    return withResourceVersion(obj, resp.header.revision);
  }
  // #endregion create

  // #region get
  /** One key at etcd's newest revision, which must not be older than what the client has seen. */
  async get(key: string, opts: GetOptions = {}): Promise<KubeObject | undefined> {
    const resp = await this.client.range({ key: bytes(key) });
    this.validateMinimumResourceVersion(opts.resourceVersion, resp.header.revision);
    if (resp.kvs.length === 0) {
      if (opts.ignoreNotFound) return undefined;
      throw newNotFound(this.gr, nameOfKey(key));
    }
    return decodeObject(resp.kvs[0].value, resp.kvs[0].modRevision);
  }

  /**
   * The storage.Interface promise "at least `resourceVersion`": a read served at an older
   * revision than the client has already seen would travel back in time.
   */
  private validateMinimumResourceVersion(minimum: string | undefined, actual: number): void {
    const min = parseResourceVersion(minimum);
    if (min > actual) throw newTooLargeResourceVersionError(min, actual, 0);
  }
  // #endregion get

  // #region get-list
  /**
   * List under a prefix (or the one key). Which revision is read:
   * - a continue token: the token's revision (-1 in the token: the newest);
   * - resourceVersionMatch=Exact: exactly `resourceVersion` (410 if compacted);
   * - NotOlderThan, or "0": the newest, checked to be at least `resourceVersion`;
   * - legacy (no match given): the newest, except a paged list with a resourceVersion, which is
   *   read exactly there — as kube-apiserver has always done.
   * With a limit, etcd is asked for `limit` keys at a time; when the selector filters some out,
   * the next range asks for twice as many (up to 10 000), until the page is full or the keys
   * run out.
   */
  async getList(key: string, opts: ListOptions): Promise<ListResult> {
    const pred = opts.predicate;
    let keyPrefix = key;
    if (opts.recursive && !keyPrefix.endsWith("/")) keyPrefix += "/";
    let startKey = opts.recursive ? keyPrefix : key;
    const pageSize = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const paging = pageSize > 0;

    // #region list-revision
    let withRev = 0;
    const continuing = opts.recursive && !!opts.continue;
    if (continuing) {
      const decoded = decodeContinue(opts.continue as string, keyPrefix);
      if ("error" in decoded) throw newBadRequest(`invalid continue token: ${decoded.error}`);
      startKey = decoded.key;
      // rv > 0: the revision of the first page; rv < 0: the newest (after a compaction).
      if (decoded.rv > 0) withRev = decoded.rv;
    } else if (opts.resourceVersion) {
      const fromRV = parseResourceVersion(opts.resourceVersion);
      switch (opts.resourceVersionMatch ?? "") {
        case "NotOlderThan":
          break; // checked against the revision etcd answers at
        case "Exact":
          withRev = fromRV;
          break;
        case "":
          if (opts.recursive && paging && fromRV > 0) withRev = fromRV;
          break;
        default:
          throw newBadRequest(`unknown ResourceVersionMatch value: ${opts.resourceVersionMatch}`);
      }
    }
    // #endregion list-revision

    const rangeEnd = opts.recursive ? prefixRangeEnd(bytes(keyPrefix)) : undefined;
    let limit = pageSize;
    const items: KubeObject[] = [];
    let lastKey = "";
    let hasMore = false;
    let lastCount = 0;
    let validated = false;
    for (;;) {
      let resp: RangeResponse;
      try {
        resp = await this.client.range({
          key: bytes(startKey),
          rangeEnd,
          limit: paging ? limit : 0,
          revision: withRev,
        });
      } catch (e) {
        if (isFutureRevError(e)) {
          throw newTooLargeResourceVersionError(withRev, Number(await this.currentResourceVersion()), 0);
        }
        throw interpretListError(e, continuing, startKey, keyPrefix);
      }
      if (!validated) {
        this.validateMinimumResourceVersion(continuing ? "" : opts.resourceVersion, resp.header.revision);
        validated = true;
      }
      hasMore = resp.more;
      lastCount = resp.count;
      if (resp.kvs.length === 0 && hasMore) {
        throw newInternalError("no results were found, but etcd indicated there were more values remaining");
      }
      for (const kv of resp.kvs) {
        if (paging && items.length >= pageSize) {
          hasMore = true;
          break;
        }
        lastKey = text(kv.key);
        const obj = decodeObject(kv.value, kv.modRevision);
        if (pred.empty || pred.matches(obj)) items.push(obj);
      }
      // Every later range of this list reads the same revision as the first.
      if (withRev === 0) withRev = resp.header.revision;
      if (!hasMore || !paging || items.length >= pageSize) break;
      // The selector dropped some: ask for more at once, but never unboundedly many.
      if (limit < maxLimit) limit = Math.min(limit * 2, maxLimit);
      startKey = `${lastKey}\x00`;
    }

    const result: ListResult = { items, resourceVersion: String(withRev) };
    if (hasMore) {
      // The next page starts right after the last key examined (matched or not).
      result.continue = encodeContinue(`${lastKey}\x00`, keyPrefix, withRev);
      // etcd's count ignores the selector: a count is reported only when nothing was filtered.
      if (pred.empty) result.remainingItemCount = lastCount - pageSize;
    }
    return result;
  }

  // #endregion get-list

  // #region guaranteed-update
  /**
   * Optimistic concurrency: read, let the caller compute the new object, write it only if the
   * key's mod_revision is still the one read; if not, start over from what etcd answered in the
   * same txn. The caller's preconditions are checked against every version it is shown. An
   * update that changes nothing writes nothing (the resourceVersion stays).
   *
   * With `cachedExistingObject` (the watch cache's copy) the first try starts from it instead of
   * a read. It may be stale, so whatever it decides is confirmed against etcd: a lost txn reads
   * the current object in its failure branch; a refusal (precondition, tryUpdate's error) or a
   * no-op is re-judged on a fresh read before it is answered, as upstream's origStateIsCurrent.
   */
  async guaranteedUpdate(
    key: string,
    opts: GuaranteedUpdateOptions,
    tryUpdate: UpdateFunc,
  ): Promise<KubeObject> {
    const ignoreNotFound = opts.ignoreNotFound ?? false;
    const cached = opts.cachedExistingObject;
    let state: ObjState = cached
      ? { obj: cached, rev: Number(cached.metadata.resourceVersion) }
      : await this.getState(key, ignoreNotFound);
    let isCurrent = !cached;
    for (;;) {
      const preconditionError = checkPreconditions(this.gr, key, state.obj, opts.preconditions);
      if (preconditionError) {
        if (isCurrent) throw preconditionError;
        state = await this.getState(key, ignoreNotFound);
        isCurrent = true;
        continue;
      }
      // The stored form of what tryUpdate is shown: the no-op check below compares with it, and
      // its decode is tryUpdate's own copy (JSON.parse of it costs less than half of
      // structuredClone — chapter 5's bind benchmark). It is that object exactly: state.obj is
      // JSON (decoded from etcd or the watch cache) with resourceVersion String(state.rev).
      if (state.obj && state.data === undefined) state.data = encodeObject(state.obj);
      let updated: KubeObject;
      try {
        updated = await tryUpdate(state.obj ? decodeObject(state.data as string, state.rev) : undefined);
      } catch (e) {
        if (isCurrent) throw e;
        const guessedRev = state.rev;
        state = await this.getState(key, ignoreNotFound);
        isCurrent = true;
        if (state.rev === guessedRev) throw e; // the guess was current after all
        continue;
      }
      const data = encodeObject(updated);
      if (state.obj && data === state.data) {
        if (isCurrent) return state.obj;
        // A no-op against the guess: answer it only if etcd still holds exactly that.
        state = await this.getState(key, ignoreNotFound);
        isCurrent = true;
        if (state.obj && data === state.data) return state.obj;
        continue;
      }

      const resp = await this.client.txn({
        compare: [modRevisionIs(key, state.rev)],
        success: [{ requestPut: { key: bytes(key), value: bytes(data) } }],
        failure: [{ requestRange: { key: bytes(key) } }],
      });
      if (resp.succeeded) return withResourceVersion(updated, resp.header.revision);
      // Lost the race: the failure branch read the key in the same txn, so no extra round trip.
      state = this.stateFrom(key, resp.responses[0]?.responseRange, ignoreNotFound);
      isCurrent = true;
    }
  }

  private async getState(key: string, ignoreNotFound: boolean): Promise<ObjState> {
    return this.stateFrom(key, await this.client.range({ key: bytes(key) }), ignoreNotFound);
  }

  private stateFrom(key: string, resp: RangeResponse | undefined, ignoreNotFound: boolean): ObjState {
    const kv = resp?.kvs[0];
    if (!kv) {
      if (!ignoreNotFound) throw newNotFound(this.gr, nameOfKey(key));
      return { rev: 0 };
    }
    const data = text(kv.value);
    return { obj: decodeObject(data, kv.modRevision), rev: kv.modRevision, data };
  }
  // #endregion guaranteed-update

  // #region delete
  /**
   * conditionalDelete: check the preconditions and the caller's validation against the current
   * object, then delete only if it is still that object; otherwise look again.
   */
  async delete(
    key: string,
    preconditions?: Preconditions,
    validateDeletion?: (current: KubeObject) => void | Promise<void>,
  ): Promise<KubeObject> {
    let state = await this.getState(key, false);
    for (;;) {
      const obj = state.obj as KubeObject;
      const preconditionError = checkPreconditions(this.gr, key, obj, preconditions);
      if (preconditionError) throw preconditionError;
      if (validateDeletion) await validateDeletion(structuredClone(obj));
      const resp = await this.client.txn({
        compare: [modRevisionIs(key, state.rev)],
        success: [{ requestDeleteRange: { key: bytes(key) } }],
        failure: [{ requestRange: { key: bytes(key) } }],
      });
      if (resp.succeeded) return decodeObject(state.data as string, resp.header.revision);
      state = this.stateFrom(key, resp.responses[0]?.responseRange, false);
    }
  }
  // #endregion delete

  /** etcd's current revision, from the header of the cheapest read there is (a count). */
  async currentResourceVersion(): Promise<string> {
    const resp = await this.client.range({ key: bytes("/"), countOnly: true });
    return String(resp.header.revision);
  }

  // #region watch
  /**
   * A watch from `resourceVersion`: "" or "0" first lists what exists now (ADDED events) and then
   * watches from just after that list; N watches everything after N.
   */
  async watch(key: string, opts: WatchOptions): Promise<Watch> {
    const initialRev = parseResourceVersion(opts.resourceVersion);
    let prefix = key;
    if (opts.recursive && !prefix.endsWith("/")) prefix += "/";
    const keyBytes = bytes(opts.recursive ? prefix : key);
    const rangeEnd = opts.recursive ? prefixRangeEnd(keyBytes) : undefined;

    const initial: StorageWatchEvent[] = [];
    let startRevision = initialRev + 1;
    if (initialRev === 0) {
      // sync(): the current state, as if every object had just been added.
      const resp = await this.client.range({ key: keyBytes, rangeEnd });
      for (const kv of resp.kvs) {
        const obj = decodeObject(kv.value, kv.modRevision);
        if (opts.predicate.empty || opts.predicate.matches(obj)) initial.push({ type: "ADDED", object: obj });
      }
      startRevision = resp.header.revision + 1;
    }
    const etcdWatch = this.client.watch({
      key: keyBytes,
      rangeEnd,
      startRevision,
      prevKv: true,
      progressNotify: !!opts.allowWatchBookmarks,
    });
    const w = new WatchChan(etcdWatch, opts.predicate, initial, {
      bookmarks: !!opts.allowWatchBookmarks,
      newFunc: this.newFunc,
      progressRequestIntervalMs: this.progressRequestIntervalMs,
      onStop: () => this.watches.delete(w),
    });
    this.watches.add(w);
    return w;
  }
  // #endregion watch

  async close(): Promise<void> {
    for (const w of [...this.watches]) w.stop();
  }
}

// #region guard-client
/**
 * The client as the store uses it: a compacted or future revision stays an EtcdError (the
 * callers turn those into 410 and 504 with context); any other failure — etcd unreachable, a
 * request etcd refused — becomes a 500 InternalError carrying etcd's text, so the handler
 * always gets a Status to send.
 */
function guardClient(client: EtcdClient): EtcdClient {
  const guard = <T>(p: Promise<T>): Promise<T> =>
    p.catch((e: unknown) => {
      if (isCompactedError(e) || isFutureRevError(e) || isStatusError(e)) throw e;
      throw newInternalError((e as Error)?.message ?? String(e));
    });
  return {
    range: (r) => guard(client.range(r)),
    txn: (r) => guard(client.txn(r)),
    compact: (rev) => guard(client.compact(rev)),
    watch: (r) => client.watch(r),
    close: () => client.close(),
  };
}
// #endregion guard-client

/** The compares every write here rests on; a key that does not exist has mod_revision 0. */
function notFound(key: string): Compare {
  return { key: bytes(key), target: "MOD", result: "EQUAL", modRevision: 0 };
}

function modRevisionIs(key: string, rev: number): Compare {
  return { key: bytes(key), target: "MOD", result: "EQUAL", modRevision: rev };
}
