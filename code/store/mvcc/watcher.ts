/**
 * Watcher and WatchStream — one client's watches and the bounded buffer their events go through.
 *
 * Solves:
 * - many watches of one client share one stream (one gRPC Watch call), each with an id;
 * - a slow client must never slow a writer: responses go into a bounded buffer and a send that
 *   finds it full *fails at once* — the store then parks the watcher as a victim (see
 *   watchable-store.ts) instead of waiting;
 * - the stream answers in etcd's WatchResponse shape (created, canceled, compact_revision,
 *   progress notifications, prev_kv), so the gRPC layer only forwards what it reads here.
 *
 * Invariants:
 * - a watcher's events are delivered in revision order, each once, and all events of a revision in
 *   one response (the store guarantees it; the stream keeps responses in FIFO order);
 * - for every watch, the `created` response comes before any of its events;
 * - at most `bufferSize` data responses wait in the buffer; control responses (created,
 *   canceled) are never refused, as etcd sends them on a separate control channel.
 *
 * @upstream etcd-io/etcd server/mvcc/watcher.go (WatchStream, watchStream, WatchResponse)
 * @upstream etcd-io/etcd server/mvcc/watchable_store.go (watchable, watcher, watcher.send)
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/watch.go (serverWatchStream: recvLoop, sendLoop)
 * @chapter 01-etcd-watch
 */

import {
  type ResponseHeader,
  revisionHeader,
  type WatchCreateRequest,
  type WatchResponse,
} from "../etcdserverpb/rpc.ts";
import type { Event } from "../mvccpb/kv.ts";
import { compareBytes } from "../pkg/bytes.ts";
import { type Clock, realClock, type Timer } from "../pkg/clock.ts";
import { EtcdError } from "../rpctypes/error.ts";
import { type KeyRange, keyRange } from "./index.ts";
import type { RangeOptions, RangeResult } from "./kv.ts";
import { ErrCompacted } from "./kvstore-txn.ts";

export const ErrWatcherNotExist = new EtcdError("InvalidArgument", "mvcc: watcher does not exist");
export const ErrEmptyWatcherRange = new EtcdError("InvalidArgument", "mvcc: watcher range is empty");
export const ErrWatcherDuplicateID = new EtcdError(
  "InvalidArgument",
  "mvcc: duplicate watch ID provided on the WatchStream",
);

/** The id of a response that speaks for every watcher of a stream (progress for all). */
export const InvalidWatchID = -1;

/** Returns true when the event must NOT be sent (etcd's FilterFunc). */
export type FilterFunc = (ev: Event) => boolean;
export const filterNoPut: FilterFunc = (ev) => ev.type === "PUT";
export const filterNoDelete: FilterFunc = (ev) => ev.type === "DELETE";

/** What the store hands a watcher (etcd's mvcc.WatchResponse); the stream makes a WatchResponse of it. */
export interface WatcherResponse {
  watchId: number;
  events: Event[];
  /** The store revision the response speaks for. */
  revision: number;
  /** Non-zero: the watcher wanted compacted history and is cancelled. */
  compactRevision?: number;
}

/** Where a watcher's responses go: its stream's bounded buffer. */
export interface WatchSink {
  trySend(r: WatcherResponse): boolean;
}

// #region watchable
/**
 * What a WatchStream needs of the store it watches (etcd's `watchable` interface): register and
 * cancel watchers, progress notifications, the current revision — plus a read for prev_kv and a
 * nudge when buffer space frees up. The WatchableStore (watchable-store.ts) is one; the stream
 * knows only this, so the store can build streams and the streams need not know the store.
 */
export interface Watchable {
  watch(range: KeyRange, startRev: number, id: number, sink: WatchSink, filters: FilterFunc[]): Watcher;
  cancelWatcher(w: Watcher): void;
  /** A progress notification for w, if it is caught up. */
  progress(w: Watcher): boolean;
  /** One progress notification (watch id -1) if every given watcher is caught up. */
  progressAll(watchers: Watcher[]): boolean;
  rev(): number;
  range(key: Uint8Array, rangeEnd: Uint8Array | undefined, opts: RangeOptions): RangeResult | EtcdError;
  /** A stream's reader freed buffer space: retry the watchers parked as victims. */
  kickVictims(): void;
}
// #endregion watchable

// #region watcher
export class Watcher {
  /** Revision the watch started from (0 = "from now"). */
  readonly startRev: number;
  /** The lowest revision this watcher still needs to hear about: everything below was sent. */
  minRev: number;
  /** Its last send failed (buffer full); it waits in `victims` with the events it missed. */
  victim = false;
  /** Cancelled because it asked for compacted history. */
  compacted = false;

  constructor(
    readonly range: KeyRange,
    startRev: number,
    readonly id: number,
    private readonly sink: WatchSink,
    readonly filters: FilterFunc[] = [],
  ) {
    this.startRev = startRev;
    this.minRev = startRev;
  }

  /**
   * Offers a response to the stream; false if the buffer is full (the caller keeps the events and
   * retries). A response whose events were all filtered out is not sent, and counts as sent.
   */
  send(r: WatcherResponse): boolean {
    const isProgress = r.events.length === 0;
    const events =
      this.filters.length === 0 ? r.events : r.events.filter((ev) => !this.filters.some((f) => f(ev)));
    if (!isProgress && events.length === 0) return true;
    return this.sink.trySend({ ...r, events });
  }
}
// #endregion watcher

export interface WatchStreamOptions {
  /** Data responses that may wait unread (etcd's chanBufLen = 128). */
  bufferSize?: number;
  /** How often watchers with progress_notify hear the revision when idle (etcd: 10 minutes). */
  progressNotifyInterval?: number;
  clock?: Clock;
  /** Fills response headers (cluster and member id); default: revision only. */
  header?: (revision: number) => ResponseHeader;
}

interface QueuedResponse {
  response: WatchResponse;
  /** Data responses count against bufferSize; control responses do not. */
  data: boolean;
}

export class WatchStream implements WatchSink {
  private readonly queue: QueuedResponse[] = [];
  private dataQueued = 0;
  private readonly bufferSize: number;
  private readonly watchers = new Map<number, Watcher>();
  private readonly prevKv = new Set<number>();
  /** Watchers with progress_notify → "nothing was sent to it since the last tick". */
  private readonly progress = new Map<number, boolean>();
  private nextID = 0;
  private closed = false;
  private waiter?: (r: WatchResponse | undefined) => void;
  private readonly clock: Clock;
  private readonly progressNotifyInterval: number;
  private progressTimer?: Timer;
  private readonly header: (revision: number) => ResponseHeader;

  constructor(
    private readonly store: Watchable,
    opts: WatchStreamOptions = {},
  ) {
    this.bufferSize = opts.bufferSize ?? 128;
    this.clock = opts.clock ?? realClock;
    this.progressNotifyInterval = opts.progressNotifyInterval ?? 10 * 60 * 1000;
    this.header = opts.header ?? revisionHeader;
  }

  // #region watch
  /**
   * Creates a watch. Always queues the `created` response (canceled, with a reason, on failure)
   * and returns the watch id or the error.
   */
  watch(req: WatchCreateRequest): number | EtcdError {
    // An empty key means the smallest key, "\0" (etcd's recvLoop).
    const key = req.key.length === 0 ? new Uint8Array([0]) : req.key;
    const startRev = req.startRevision ?? 0;
    if (startRev < 0) return this.refuse(ErrCompacted, ErrCompacted.grpcMessage);
    const range = keyRange(key, req.rangeEnd);
    if (this.closed || (range.kind === "between" && !(compareBytes(key, range.end) < 0))) {
      return this.refuse(ErrEmptyWatcherRange);
    }
    let id = req.watchId ?? 0;
    if (id === 0) {
      // etcd's AutoWatchID is 0, and the first id it hands out is 0 as well.
      while (this.watchers.has(this.nextID)) this.nextID++;
      id = this.nextID++;
    } else if (this.watchers.has(id)) {
      return this.refuse(ErrWatcherDuplicateID);
    }

    this.push({ ...this.emptyResponse(id, this.store.rev()), created: true }, false);
    const filters = (req.filters ?? []).map((f) => (f === "NOPUT" ? filterNoPut : filterNoDelete));
    const w = this.store.watch(range, startRev, id, this, filters);
    this.watchers.set(id, w);
    if (req.prevKv) this.prevKv.add(id);
    if (req.progressNotify) {
      this.progress.set(id, true);
      this.startProgressTicker();
    }
    return id;
  }

  private refuse(err: EtcdError, reason = err.message): EtcdError {
    const r = this.emptyResponse(InvalidWatchID, this.store.rev());
    this.push({ ...r, created: true, canceled: true, cancelReason: reason }, false);
    return err;
  }
  // #endregion watch

  /** Cancels a watch; its `canceled` response follows any events already queued. */
  cancel(id: number): EtcdError | undefined {
    const w = this.watchers.get(id);
    if (!w || this.closed) return ErrWatcherNotExist;
    this.store.cancelWatcher(w);
    this.forget(id);
    this.push({ ...this.emptyResponse(id, this.store.rev()), canceled: true }, false);
    return undefined;
  }

  /** A progress notification for one watch, if it is caught up (otherwise nothing is sent). */
  requestProgress(id: number): void {
    const w = this.watchers.get(id);
    if (w) this.store.progress(w);
  }

  /** One progress notification (watch id -1) if every watch of the stream is caught up. */
  requestProgressAll(): boolean {
    return this.store.progressAll([...this.watchers.values()]);
  }

  /** The store's current revision. */
  rev(): number {
    return this.store.rev();
  }

  // #region buffer
  /** Called by the store through Watcher.send; never waits. */
  trySend(r: WatcherResponse): boolean {
    if (this.closed) return true; // nobody will read it; do not make the store retry
    if (this.dataQueued >= this.bufferSize) return false;
    const compacted = (r.compactRevision ?? 0) !== 0;
    const response: WatchResponse = {
      ...this.emptyResponse(r.watchId, r.revision),
      canceled: compacted,
      compactRevision: r.compactRevision ?? 0,
      events: r.events,
    };
    if (r.events.length > 0 && this.progress.has(r.watchId)) this.progress.set(r.watchId, false);
    // A watch cancelled by compaction keeps its id until the client cancels it, as in etcd (whose
    // sendLoop does not call Cancel): the id is not handed out or accepted again, and the
    // client's cancel is answered with `canceled`.
    this.push(response, true);
    return true;
  }

  private push(response: WatchResponse, data: boolean): void {
    this.queue.push({ response, data });
    if (data) this.dataQueued++;
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = undefined;
      resolve(this.receive());
    }
  }

  /** The next response, or undefined if none is waiting. Frees buffer space. */
  receive(): WatchResponse | undefined {
    const item = this.queue.shift();
    if (!item) return undefined;
    if (item.data) {
      this.dataQueued--;
      // Space freed: a watcher parked as a victim may now be able to send.
      this.store.kickVictims();
    }
    return this.withPrevKv(item.response);
  }

  /** Every waiting response, oldest first. */
  drain(): WatchResponse[] {
    const out: WatchResponse[] = [];
    for (let r = this.receive(); r; r = this.receive()) out.push(r);
    return out;
  }

  /** Waits for the next response; undefined once the stream is closed and empty. */
  next(): Promise<WatchResponse | undefined> {
    const r = this.receive();
    if (r || this.closed) return Promise.resolve(r);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Data responses waiting to be read. */
  pending(): number {
    return this.dataQueued;
  }
  // #endregion buffer

  /** Cancels every watch; readers get what is queued, then undefined. */
  close(): void {
    if (this.closed) return;
    for (const w of this.watchers.values()) this.store.cancelWatcher(w);
    this.watchers.clear();
    this.closed = true;
    this.progressTimer?.cancel();
    if (this.waiter && this.queue.length === 0) {
      const resolve = this.waiter;
      this.waiter = undefined;
      resolve(undefined);
    }
  }

  // #region prev-kv
  /**
   * prev_kv: the key as it was just before the event, read at modRevision - 1 when the response
   * is handed out (as etcd's sendLoop does). A creation has no previous value; a previous value
   * that compaction removed is left out.
   */
  private withPrevKv(r: WatchResponse): WatchResponse {
    if (!this.prevKv.has(r.watchId) || r.events.length === 0) return r;
    const events = r.events.map((ev): Event => {
      const isCreate = ev.type === "PUT" && ev.kv.createRevision === ev.kv.modRevision;
      if (isCreate) return ev;
      const prev = this.store.range(ev.kv.key, undefined, { rev: ev.kv.modRevision - 1 });
      if (prev instanceof Error || prev.kvs.length === 0) return ev;
      return { ...ev, prevKv: prev.kvs[0] };
    });
    return { ...r, events };
  }
  // #endregion prev-kv

  // #region progress-notify
  /**
   * progress_notify: every interval, each such watch that got no events since the last tick is
   * sent the current revision (only if it is caught up) — so an idle client still learns how far
   * the store has moved, and can resume from there.
   */
  private startProgressTicker(): void {
    if (this.progressTimer || this.closed) return;
    this.progressTimer = this.clock.setTimer(this.progressNotifyInterval, () => {
      this.progressTimer = undefined;
      for (const [id, idle] of this.progress) {
        if (idle) this.requestProgress(id);
        this.progress.set(id, true);
      }
      if (this.progress.size > 0) this.startProgressTicker();
    });
  }
  // #endregion progress-notify

  private forget(id: number): void {
    this.watchers.delete(id);
    this.prevKv.delete(id);
    this.progress.delete(id);
  }

  private emptyResponse(watchId: number, revision: number): WatchResponse {
    return {
      header: this.header(revision),
      watchId,
      created: false,
      canceled: false,
      compactRevision: 0,
      cancelReason: "",
      fragment: false,
      events: [],
    };
  }
}
