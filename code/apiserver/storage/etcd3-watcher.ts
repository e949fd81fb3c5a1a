/**
 * watchChan — one etcd3 watch as the API server's storage sees it: etcd's key events turned into
 * ADDED / MODIFIED / DELETED events of objects, filtered by the request's selectors.
 * Upstream: k8s.io/apiserver pkg/storage/etcd3/watcher.go.
 *
 * Solves:
 * - etcd speaks keys and revisions (PUT, DELETE, with the previous value on request); a watcher
 *   wants objects, and only those its selectors match — so an object that stops matching must
 *   reach it as DELETED, and one that starts matching as ADDED;
 * - a consumer that reads slowly must not make us buffer without bound: etcd's responses are
 *   pulled only as fast as the consumer reads them (etcd buffers or stalls the watcher meanwhile);
 * - a watcher that asked for bookmarks hears etcd's progress notifications as BOOKMARK events,
 *   and may ask etcd for one at an interval.
 *
 * Invariants:
 * - events leave in revision order; the first ones are the initial ADDED events the store's
 *   `watch` listed (for resourceVersion 0), then everything etcd sends;
 * - a compacted or failed watch ends with one ERROR event carrying a Status (410 Gone, reason Expired for
 *   compaction), and nothing after it.
 *
 * - a change other than a creation whose previous value etcd no longer has (compacted) ends the
 *   watch with an ERROR (InternalError), as upstream's parseEvent: the client must relist.
 *
 * What upstream does differently: a goroutine per watch decodes events (concurrently, in order)
 * into a channel of 100.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/watcher.go (watchChan: startWatching, processEvents, transform, transformErrorToEvent, RequestWatchProgress)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/event.go (parseEvent, progressNotifyEvent)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import type { WatchResponse } from "../../store/etcdserverpb/rpc.ts";
import type { KeyValue } from "../../store/mvccpb/kv.ts";
import { newInternalError, newResourceExpired } from "../errors.ts";
import { decodeObject } from "./api-object-versioner.ts";
import { errorEvent, expiredWatch, interpretWatchError } from "./errors.ts";
import { type EtcdWatch, isProgressNotify } from "./etcd-client.ts";
import type { SelectionPredicate, StorageWatchEvent, Watch } from "./interfaces.ts";

// #region watch-chan
/**
 * One watch: etcd's responses, pulled only as fast as the consumer reads them (etcd buffers or
 * stalls the watcher meanwhile), each turned into the events this watcher may see.
 */
export class WatchChan implements Watch {
  private readonly pending: StorageWatchEvent[];
  private stopped = false;
  private timer?: ReturnType<typeof setInterval>;

  constructor(
    private readonly etcdWatch: EtcdWatch,
    private readonly predicate: SelectionPredicate,
    initial: StorageWatchEvent[],
    private readonly opts: {
      bookmarks: boolean;
      newFunc: () => KubeObject;
      progressRequestIntervalMs: number;
      onStop: () => void;
    },
  ) {
    this.pending = initial;
    if (opts.bookmarks && opts.progressRequestIntervalMs > 0) {
      this.timer = setInterval(() => etcdWatch.requestProgress(), opts.progressRequestIntervalMs);
      this.timer.unref?.();
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.etcdWatch.close();
    this.opts.onStop();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<StorageWatchEvent> {
    try {
      while (!this.stopped) {
        const ev = this.pending.shift();
        if (ev) {
          yield ev;
          continue;
        }
        let resp: WatchResponse | undefined;
        try {
          resp = await this.etcdWatch.next();
        } catch (e) {
          if (!this.stopped) yield errorEvent(interpretWatchError(e));
          return;
        }
        if (!resp || this.stopped) return;
        const end = this.handle(resp);
        if (end) {
          yield* this.pending.splice(0);
          yield end;
          return;
        }
      }
    } finally {
      this.stop();
    }
  }

  /** Queues the events of one response; returns the ERROR event that ends the watch, if any. */
  private handle(resp: WatchResponse): StorageWatchEvent | undefined {
    if (resp.canceled) {
      // A watch from a compacted revision is cancelled with the oldest revision left.
      if (resp.compactRevision > 0) return errorEvent(newResourceExpired(expiredWatch));
      return errorEvent(newInternalError(resp.cancelReason || "etcd watch was cancelled"));
    }
    if (resp.created) return undefined;
    if (isProgressNotify(resp)) {
      if (this.opts.bookmarks) {
        const obj = this.opts.newFunc();
        obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(resp.header.revision) };
        this.pending.push({ type: "BOOKMARK", object: obj });
      }
      return undefined;
    }
    for (const ev of resp.events) {
      // parseEvent: a change other than a creation must come with the value before it; etcd
      // leaves that out when it was compacted away. Upstream ends the watch with an error (the
      // client relists); skipping the event would lose a deletion and leave a ghost object in
      // every informer — found by the informer's fault tests (client/tools/cache).
      const isCreate = ev.type === "PUT" && ev.kv.createRevision === ev.kv.modRevision;
      if (!isCreate && !ev.prevKv) {
        const key = new TextDecoder().decode(ev.kv.key);
        return errorEvent(
          newInternalError(
            `etcd event received with PrevKv=nil (key="${key}", modRevision=${ev.kv.modRevision}, type=${ev.type})`,
          ),
        );
      }
      const out = transform(ev.type, ev.kv, ev.prevKv, this.predicate);
      if (out) this.pending.push(out);
    }
    return undefined;
  }
}

// #region transform
/**
 * One etcd event as this watcher sees it. A PUT is ADDED if the key was just created; otherwise
 * the old and new objects are both tested: matched before and after → MODIFIED; only after →
 * ADDED (it entered the selection); only before → DELETED (it left, and the watcher must drop
 * it). A deletion carries the object as it was, at the deletion's revision.
 */
export function transform(
  type: "PUT" | "DELETE",
  kv: KeyValue,
  prevKv: KeyValue | undefined,
  pred: SelectionPredicate,
): StorageWatchEvent | undefined {
  const rev = kv.modRevision;
  const test = (o: KubeObject) => pred.empty || pred.matches(o);
  if (type === "DELETE") {
    if (!prevKv) return undefined; // its old value was compacted away: nothing to show
    const old = decodeObject(prevKv.value, rev);
    return test(old) ? { type: "DELETED", object: old } : undefined;
  }
  const cur = decodeObject(kv.value, rev);
  if (kv.createRevision === kv.modRevision) {
    return test(cur) ? { type: "ADDED", object: cur } : undefined;
  }
  // A watch of everything (the cacher's own) needs no previous object: decoding it would only
  // be thrown away — a second JSON.parse per update on the write path's thread.
  if (pred.empty) return { type: "MODIFIED", object: cur };
  // Not a creation, but etcd could not give the old value (compacted): judge by the new one.
  // (Upstream sends an ERROR event here instead.)
  if (!prevKv) return test(cur) ? { type: "MODIFIED", object: cur } : undefined;
  const curPasses = test(cur);
  const oldPasses = test(decodeObject(prevKv.value, rev));
  if (curPasses && oldPasses) return { type: "MODIFIED", object: cur };
  if (curPasses) return { type: "ADDED", object: cur };
  if (oldPasses) return { type: "DELETED", object: decodeObject(prevKv.value, rev) };
  return undefined;
}
// #endregion transform
// #endregion watch-chan
