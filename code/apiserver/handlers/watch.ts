/**
 * The watch handler — `GET /api/v1/pods?watch=true&resourceVersion=N` (or the legacy
 * `/api/v1/watch/pods`): one long HTTP response, one JSON line per change.
 * Mirrors k8s.io/apiserver's handlers/watch.go (the upstream files are listed at the end of this header).
 *
 * Solves:
 * - the answer to "does the API server poll the kubelet, or call it back?": neither — every
 *   component holds a watch open, and the server pushes each change down it as it commits;
 * - the client must see that the watch started before anything changed (kubectl prints the
 *   table header, a reflector knows it is live): headers go out at once, chunked;
 * - a watch cannot run forever (load balancing, leaked connections): it ends after
 *   `timeoutSeconds`, by default a random 30–60 minutes so that many clients started together
 *   do not all reconnect together; the client then watches again from its last resourceVersion;
 * - a resourceVersion too old to replay is not an HTTP error but an ERROR event carrying a
 *   410 Gone, reason Expired Status, which tells a reflector to list again;
 * - a thousand watchers of a busy resource would cost a socket write per event each: the lines
 *   of one turn of the event loop go out in one write, and a watch whose client does not read
 *   stops taking events (they pile up in its cache watcher until that closes the watch) instead
 *   of piling them up in memory here.
 *
 * Invariants:
 * - events are `{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": …}`, one per line, in
 *   resourceVersion order, objects with kind and apiVersion set;
 * - with `Accept: …;as=Table`, each event's object is a Table of one row (kubectl get -w);
 * - the storage watch is stopped when the client goes away or the timeout fires;
 * - at most one turn's lines wait unwritten, plus what the socket holds when its client stalls.
 *
 * What upstream does differently: the encoder writes each event to a buffered writer and
 * flushes when the watcher's channel is empty (`len(ch) == 0`), which also coalesces a burst;
 * a blocked write blocks that watcher's goroutine, which is what fills its channel.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go (serveWatch, WatchServer.HandleHTTP: Flush when len(ch) == 0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go (ListResource: the watch branch, timeout = MinRequestTimeout × (1 + rand))
 * @chapter 02-apiserver
 */
import type { ServerResponse } from "node:http";
import type { KubeObject, Status } from "../../api/meta.ts";
import { activeSpan, podAttributes, withSpan } from "../../tracing/tracing.ts"; // chapter 8: tracing
import { errorToAPIStatus, isStatusError } from "../errors.ts";
import { apiVersionOf } from "../resources.ts";
import { CacheWatcher } from "../storage/cache-watcher.ts";
import type { StorageWatchEvent, Watch } from "../storage/interfaces.ts";
import { asTable, boolParam, intParam, type RequestScope, withTypeMeta } from "./rest.ts";

/** Upstream's --min-request-timeout default: 1800 seconds. */
export const minRequestTimeoutSeconds = 1800;

// #region serve-watch
export async function watchResource(scope: RequestScope): Promise<void> {
  const { res, query } = scope;
  const timeoutSeconds = intParam(query, "timeoutSeconds") ?? randomWatchTimeout();
  let watch: Awaited<ReturnType<typeof scope.store.watch>> | undefined;
  let startError: Status | undefined;
  try {
    watch = await scope.store.watch(scope.info.namespace, {
      labelSelector: query.get("labelSelector") ?? "",
      fieldSelector: query.get("fieldSelector") ?? "",
      resourceVersion: query.get("resourceVersion") ?? undefined,
      allowWatchBookmarks: boolParam(query, "allowWatchBookmarks"),
      deadline: Date.now() + timeoutSeconds * 1000,
    });
  } catch (e) {
    // Too old a resourceVersion is told inside the stream (410 as an ERROR event); anything
    // else (a bad selector) is an ordinary error answer.
    if (!(isStatusError(e) && e.code === 410)) throw e;
    startError = errorToAPIStatus(e).status;
  }

  res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private" });
  res.flushHeaders();
  if (startError) {
    res.end(`${JSON.stringify({ type: "ERROR", object: startError })}\n`);
    return;
  }
  const w = watch as NonNullable<typeof watch>;
  const out = new WatchResponseWriter(res);
  const encoder = eventEncoder(scope);
  const timer = setTimeout(() => w.stop(), timeoutSeconds * 1000);
  const onClose = () => w.stop();
  res.on("close", onClose);
  // chapter 8: tracing — each pod event sent is a span, only when this watch's request is traced.
  const traced = scope.resource.kind === "Pod" && activeSpan() !== undefined;
  try {
    for await (const events of batchesOf(w)) {
      if (res.destroyed) break;
      if (traced) for (const event of events) sendTraced(scope, out, encoder, event);
      else for (const event of events) out.push(encoder(event));
      if (events[events.length - 1].type === "ERROR") break;
      // The client is not keeping up: take nothing more until its socket drains. Events wait in
      // the watcher's buffer meanwhile, and a watcher whose buffer overflows is closed.
      if (out.backedUp) await out.drained();
    }
  } catch (e) {
    out.push(`${JSON.stringify({ type: "ERROR", object: errorToAPIStatus(e).status })}\n`);
  } finally {
    clearTimeout(timer);
    res.off("close", onClose);
    w.stop();
    out.flush();
    if (!res.destroyed) res.end();
  }
}

/**
 * A watch's events a batch at a time: the watch cache's watchers hand over everything they have
 * buffered at once (nextBatch); any other watch (etcd's, when the watch cache is off) one by one.
 */
async function* batchesOf(w: Watch): AsyncGenerator<StorageWatchEvent[]> {
  if (w instanceof CacheWatcher) {
    for (let batch = await w.nextBatch(); batch; batch = await w.nextBatch()) yield batch;
    return;
  }
  for await (const event of w) yield [event];
}
// #endregion serve-watch

// #region coalesce
/**
 * The response side of a watch: lines pushed during one turn of the event loop go out together,
 * in one write at the end of the turn (setImmediate) — a watcher handed fifty events in a turn
 * costs one socket write, not fifty. `backedUp` says the last write filled the socket's buffer.
 */
export class WatchResponseWriter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  backedUp = false;

  constructor(private readonly res: ServerResponse) {}

  push(line: Buffer | string): void {
    const bytes = typeof line === "string" ? Buffer.from(line) : line;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0 || this.res.destroyed) return;
    const chunk =
      this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.backedUp = !this.res.write(chunk);
  }

  /** Resolves when the socket has room again, or the client has gone. */
  drained(): Promise<void> {
    if (!this.res.writableNeedDrain || this.res.destroyed) {
      this.backedUp = false; // it drained before anyone waited
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        this.res.off("drain", done).off("close", done);
        this.backedUp = false;
        resolve();
      };
      this.res.on("drain", done).on("close", done);
    });
  }
}
// #endregion coalesce

/**
 * chapter 8: tracing — the delivery of one pod event to one watcher (`watch ADDED` …), named for
 * the event and carrying the pod and who watches (the scheduler, a node's kubelet). Upstream has
 * no such span: a watch is one long request span there.
 */
function sendTraced(
  scope: RequestScope,
  out: WatchResponseWriter,
  encoder: (event: StorageWatchEvent) => Buffer | string,
  event: StorageWatchEvent,
): void {
  if (event.type === "BOOKMARK" || event.type === "ERROR") {
    out.push(encoder(event));
    return;
  }
  withSpan(
    `watch ${event.type}`,
    () => ({
      ...podAttributes(event.object as KubeObject),
      "k8s.watcher": scope.user?.name ?? "",
      resourceVersion: (event.object as KubeObject).metadata?.resourceVersion ?? "",
    }),
    () => out.push(encoder(event)),
  );
}

// #region encode-event
/**
 * How this request's events become JSON lines. Plain JSON output of an event from the watch
 * cache is encoded once and the same string sent to every watcher (CachingObject); a Table is
 * shaped by the request (its columns options, row ages) and is built per watcher.
 */
function eventEncoder(scope: RequestScope): (event: StorageWatchEvent) => Buffer | string {
  const { resource } = scope;
  const encoderId = `${apiVersionOf(resource)}/${resource.kind}`;
  const withKind = (o: KubeObject) => withTypeMeta(o, resource);
  return (event) => {
    if (event.type === "ERROR") return `${JSON.stringify({ type: "ERROR", object: event.object })}\n`;
    const wantTable = scope.output.as === "table" && event.type !== "BOOKMARK";
    if (event.cachingObject && !wantTable)
      return event.cachingObject.watchLine(event.type, encoderId, withKind);
    const obj = withTypeMeta(event.object as KubeObject, resource);
    const object = wantTable ? asTable(scope, [obj], { resourceVersion: obj.metadata.resourceVersion }) : obj;
    return `${JSON.stringify({ type: event.type, object })}\n`;
  };
}
// #endregion encode-event

/** MinRequestTimeout × (1 + rand): 30 to 60 minutes. */
function randomWatchTimeout(): number {
  return Math.floor(minRequestTimeoutSeconds * (1 + Math.random()));
}
