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
 *   410 Expired Status, which tells a reflector to list again.
 *
 * Invariants:
 * - events are `{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": …}`, one per line, in
 *   resourceVersion order, objects with kind and apiVersion set;
 * - with `Accept: …;as=Table`, each event's object is a Table of one row (kubectl get -w);
 * - the storage watch is stopped when the client goes away or the timeout fires.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go (serveWatch, WatchServer.ServeHTTP)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/get.go (ListResource: the watch branch, timeout = MinRequestTimeout × (1 + rand))
 * @chapter 02-apiserver
 */
import type { KubeObject, Status } from "../../api/meta.ts";
import { isStatusError } from "../errors.ts";
import { apiVersionOf } from "../resources.ts";
import type { StorageWatchEvent } from "../storage/interfaces.ts";
import { boolParam, intParam, type RequestScope, toStatus, toTable, withTypeMeta } from "./rest.ts";

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
    startError = toStatus(e);
  }

  res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache, private" });
  res.flushHeaders();
  if (startError) {
    res.end(`${JSON.stringify({ type: "ERROR", object: startError })}\n`);
    return;
  }
  const w = watch as NonNullable<typeof watch>;
  const timer = setTimeout(() => w.stop(), timeoutSeconds * 1000);
  const onClose = () => w.stop();
  res.on("close", onClose);
  try {
    for await (const event of w) {
      if (res.destroyed) break;
      res.write(encodeEvent(scope, event));
      if (event.type === "ERROR") break;
    }
  } catch (e) {
    if (!res.destroyed) res.write(`${JSON.stringify({ type: "ERROR", object: toStatus(e) })}\n`);
  } finally {
    clearTimeout(timer);
    res.off("close", onClose);
    w.stop();
    if (!res.destroyed) res.end();
  }
}
// #endregion serve-watch

// #region encode-event
/**
 * One event as its JSON line. Plain JSON output of an event from the watch cache is encoded once
 * and the same string sent to every watcher (CachingObject); a Table is shaped by the request
 * (its columns options, row ages) and is built per watcher.
 */
function encodeEvent(scope: RequestScope, event: StorageWatchEvent): string {
  if (event.type === "ERROR") return `${JSON.stringify({ type: "ERROR", object: event.object })}\n`;
  const asTable = scope.output.as === "table" && event.type !== "BOOKMARK";
  if (event.cachingObject && !asTable) {
    const { resource } = scope;
    const encoderId = `${apiVersionOf(resource)}/${resource.kind}`;
    return event.cachingObject.watchLine(event.type, encoderId, (o) => withTypeMeta(o, resource));
  }
  const obj = withTypeMeta(event.object as KubeObject, scope.resource);
  const object = asTable ? toTable(scope, [obj], { resourceVersion: obj.metadata.resourceVersion }) : obj;
  return `${JSON.stringify({ type: event.type, object })}\n`;
}
// #endregion encode-event

/** MinRequestTimeout × (1 + rand): 30 to 60 minutes. */
function randomWatchTimeout(): number {
  return Math.floor(minRequestTimeoutSeconds * (1 + Math.random()));
}
