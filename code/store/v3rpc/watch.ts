/**
 * Watch over gRPC — one bidirectional stream per client, carrying all of its watches.
 * Mirrors etcd-io/etcd server/etcdserver/api/v3rpc/watch.go.
 *
 * Solves:
 * - a client opens one Watch stream and, on it, creates and cancels watches and asks for
 *   progress; every answer and every event travels back on the same stream, tagged with the
 *   watch id. The store side of this (ids, `created` first, prev_kv, progress, the bounded
 *   buffer) is the WatchStream of mvcc/watcher.ts; this file only connects it to the wire:
 *   `recvLoop` turns incoming requests into WatchStream calls, `sendLoop` writes what the
 *   WatchStream hands out;
 * - a slow client must not make the server buffer without bound: `sendLoop` reads the next
 *   response only once gRPC has room for it, so a stalled client fills the WatchStream's buffer
 *   and the store parks its watchers as victims (mvcc/watchable-store.ts) — memory stays bounded.
 *
 * Invariants:
 * - responses leave in the order the WatchStream hands them out (per watch: `created`, then
 *   events in revision order, then `canceled`);
 * - responses are never split: `fragment` requests are accepted and ignored, as etcd does when a
 *   response fits in one message — ours always must, since gRPC sends up to any size;
 * - when the client goes away (or the server closes), the WatchStream is closed, which cancels
 *   every watch of the stream in the store.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/watch.go (watchServer, watchServer.Watch, serverWatchStream.recvLoop, sendLoop)
 * @chapter 01-etcd-watch
 */
import type * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";
import type { EtcdServer } from "../etcdserver/server.ts";
import type { WatchCreateRequest, WatchFilterType, WatchResponse } from "../etcdserverpb/rpc.ts";
import { protobufRoot } from "../etcdserverpb/rpc-pb.ts";
import { ErrCompacted } from "../mvcc/kvstore-txn.ts";
import type { WatchStream } from "../mvcc/watcher.ts";
import type { Event } from "../mvccpb/kv.ts";
import type { Logger } from "../pkg/log.ts";

/** A decoded WatchRequest: exactly one of the three is set (proto `oneof request_union`). */
interface WatchRequest {
  createRequest?: WatchCreateRequest | null;
  cancelRequest?: { watchId: number } | null;
  progressRequest?: object | null;
}

export interface ServeWatchOptions {
  logger: Logger;
  progressNotifyInterval?: number;
  /** Called once, when the stream is over (client gone, or `end` called). */
  onEnd: () => void;
}

/**
 * The Watch service: each call is served by serveWatch and registered in `streams` (the server's
 * open streams, which its close() ends) until it is over.
 */
export function watchServer(
  etcd: EtcdServer,
  opts: Omit<ServeWatchOptions, "onEnd">,
  streams: Set<() => void>,
): grpc.UntypedServiceImplementation {
  return {
    Watch: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
      const { end } = serveWatch(etcd, call, { ...opts, onEnd: () => streams.delete(end) });
      streams.add(end);
    },
  };
}

/** Serves one Watch call. `end()` closes it from the server side (shutdown). */
export function serveWatch(
  etcd: EtcdServer,
  call: grpc.ServerDuplexStream<unknown, unknown>,
  opts: ServeWatchOptions,
): { end: () => void } {
  const ws = etcd.watch({ progressNotifyInterval: opts.progressNotifyInterval });
  let over = false;
  const finish = () => {
    if (over) return;
    over = true;
    ws.close(); // cancels its watches in the store; sendLoop drains what is queued, then stops
    opts.onEnd();
  };

  call.on("data", (req: WatchRequest) => {
    try {
      recv(ws, req);
    } catch (thrown) {
      opts.logger("error", "failed to handle watch request", { error: String(thrown) });
    }
  });
  // The client closing its sending side is not the end: etcd keeps sending events until the
  // client cancels the call (recvLoop returns nil on EOF, Watch waits for the context).
  call.on("cancelled", finish);
  call.on("error", finish);
  call.on("close", finish);

  void sendLoop(ws, call).then(
    () => finish(),
    (thrown: unknown) => {
      opts.logger("warn", "failed to send watch response to gRPC stream", { error: String(thrown) });
      finish();
    },
  );
  return { end: finish };
}

// #region recv-loop
/** One request from the client: create, cancel or progress. */
function recv(ws: WatchStream, req: WatchRequest): void {
  if (req.createRequest) {
    const c = req.createRequest;
    // The WatchStream answers a create itself: `created`, or `created`+`canceled` with the reason.
    ws.watch({ ...c, filters: (c.filters ?? []).filter(isFilterType) });
  } else if (req.cancelRequest) {
    // Cancelling an unknown id is ignored, as etcd does.
    ws.cancel(req.cancelRequest.watchId);
  } else if (req.progressRequest) {
    ws.requestProgressAll();
  }
  // An empty request is ignored: etcd logs it and keeps the stream.
}

/** An unknown filter number (a newer client) is dropped rather than misread. */
function isFilterType(f: unknown): f is WatchFilterType {
  return f === "NOPUT" || f === "NODELETE";
}
// #endregion recv-loop

// #region send-loop
/**
 * Writes every response the WatchStream hands out, waiting for gRPC's buffer to drain whenever
 * it is full. Ends the call when the WatchStream is closed and empty.
 */
async function sendLoop(ws: WatchStream, call: grpc.ServerDuplexStream<unknown, unknown>): Promise<void> {
  for (let r = await ws.next(); r; r = await ws.next()) {
    if (call.cancelled || call.writableEnded) return;
    const roomLeft = call.write(withCancelReason(r));
    if (!roomLeft) await drainedOrGone(call);
  }
  if (!call.cancelled && !call.writableEnded) call.end();
}

/**
 * Resolves when gRPC can take more, or when the call is over (so the loop never hangs). Under a
 * fan-out this runs once per full buffer, so it only adds and removes three listeners (an
 * AbortController with `events.once` would also build an AbortError each time).
 */
function drainedOrGone(call: grpc.ServerDuplexStream<unknown, unknown>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off("drain", done);
      call.off("cancelled", done);
      call.off("close", done);
      resolve();
    };
    call.on("drain", done);
    call.on("cancelled", done);
    call.on("close", done);
  });
}
// #endregion send-loop

/**
 * A watch cancelled by compaction says why in `cancel_reason` too. etcd v3.5 leaves the reason
 * empty there (its Go client derives the text from `compact_revision`), but clients that only
 * read `cancel_reason` — the `etcd3` npm client — would otherwise show an empty reason.
 */
function withCancelReason(r: WatchResponse): WatchResponse {
  if (!r.canceled || r.compactRevision === 0 || r.cancelReason) return r;
  return { ...r, cancelReason: ErrCompacted.grpcMessage };
}

// #region encode-watch-response
/**
 * The Watch method's response encoder, for the gRPC service definition (grpc.ts).
 *
 * Why not the generic one: a fan-out sends the same event to every watcher of its key — 100
 * watchers, 100 responses — and the generic encoder converts and encodes the event again for
 * each. Here each event is encoded once (cached by the event object, which the store shares
 * among the watchers it goes to) and each response is its own small part — header, watch id,
 * flags — followed by the cached events. Protobuf allows exactly that: a message's bytes are its
 * fields' bytes one after another, and a repeated field may simply appear once per element.
 */
export function watchResponseEncoder(): (resp: WatchResponse) => Buffer {
  const root = protobufRoot();
  const responseType = root.lookupType("etcdserverpb.WatchResponse");
  const eventType = root.lookupType("mvccpb.Event");
  const eventsField = responseType.fields.events.id; // 11
  const eventTag = Uint8Array.of((eventsField << 3) | 2); // length-delimited

  const encoded = new WeakMap<Event, Uint8Array>();
  const encodeEvent = (ev: Event): Uint8Array => {
    let bytes = encoded.get(ev);
    if (!bytes) {
      const body = eventType.encode(eventType.fromObject(ev)).finish();
      const w = protobuf.Writer.create();
      w.uint32(body.length);
      bytes = Buffer.concat([eventTag, w.finish(), body]);
      encoded.set(ev, bytes);
    }
    return bytes;
  };

  return (resp) => {
    const { events, ...rest } = resp;
    const head = responseType.encode(responseType.fromObject(rest)).finish();
    if (!events || events.length === 0) return Buffer.from(head.buffer, head.byteOffset, head.length);
    return Buffer.concat([head, ...events.map(encodeEvent)]);
  };
}
// #endregion encode-watch-response
