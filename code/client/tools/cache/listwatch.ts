/**
 * ListerWatcher — the two calls an informer needs from the API server, as one interface, so that
 * the reflector can run against the REST client, a fake source in tests, or anything else that
 * lists and watches.
 * Mirrors kubernetes/client-go tools/cache/listwatch.go (Lister, Watcher, ListerWatcher, NewListWatchFromClient)
 * and apimachinery pkg/watch/watch.go (watch.Interface).
 *
 * Solves:
 * - the reflector's logic (list, then watch from the list's resourceVersion, relist on 410) is the
 *   hard part and must be testable without a server: it depends only on this interface.
 *
 * Invariants:
 * - `list` resolves to one page (`metadata.continue` set when there are more) or rejects with a
 *   StatusError (code/client/errors.ts) — 410 Expired for a stale continue token;
 * - `watch` resolves once the server has accepted the watch (or rejects with a StatusError, e.g.
 *   410 Gone for a compacted resourceVersion); its events end when the server closes the stream,
 *   the connection drops, or `stop()` is called; an ERROR event carries a Status;
 * - after `stop()` no further event is delivered.
 *
 * @upstream kubernetes/client-go tools/cache/listwatch.go (ListerWatcher, ListWatch)
 * @upstream kubernetes/apimachinery pkg/watch/watch.go (Interface: Stop, ResultChan)
 * @upstream kubernetes/apimachinery pkg/apis/meta/v1/types.go (ListOptions)
 * @chapter 04-informers
 */

import type { KubeList, KubeObject, WatchEvent } from "../../../api/meta.ts";

// #region list-options
/** The query parameters of a list or watch (metav1.ListOptions), by their wire names. */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "NotOlderThan" | "Exact";
  limit?: number;
  continue?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
}
// #endregion list-options

// #region watch-interface
/** An open watch: iterate its events; `stop()` closes it (watch.Interface). */
export interface Watch<T extends KubeObject = KubeObject> extends AsyncIterable<WatchEvent<T>> {
  stop(): void;
}

export interface ListerWatcher<T extends KubeObject = KubeObject> {
  list(opts: ListOptions): Promise<KubeList<T>>;
  watch(opts: ListOptions): Promise<Watch<T>>;
}
// #endregion watch-interface

// #region list-watch-from-client
/** What newListWatchFromClient needs of a client: a GET request builder (client-go's cache.Getter). */
export interface Getter {
  get(): GetRequest;
}
export interface GetRequest {
  namespace(ns: string): GetRequest;
  resource(resource: string): GetRequest;
  params(options: object): GetRequest;
  do<R>(signal?: AbortSignal): Promise<R>;
  watch<R extends KubeObject>(signal?: AbortSignal): Promise<Watch<R>>;
}

/**
 * NewFilteredListWatchFromClient: a ListerWatcher for one resource (in one namespace, `""` for all
 * or for a cluster-scoped resource) over a RESTClient; `optionsModifier` sets a selector on every
 * list and watch (the scheduler's `spec.nodeName=` field selector, a kubelet's own node).
 */
export function newFilteredListWatchFromClient<T extends KubeObject = KubeObject>(
  client: Getter,
  resource: string,
  namespace: string,
  optionsModifier: (options: ListOptions) => ListOptions = (o) => o,
): ListerWatcher<T> {
  const request = (opts: ListOptions) =>
    client
      .get()
      .namespace(namespace)
      .resource(resource)
      .params(optionsModifier({ ...opts }));
  return {
    list: (opts) => request(opts).do<KubeList<T>>(),
    watch: (opts) => request(opts).watch<T>(),
  };
}

/** NewListWatchFromClient: the same, with an optional field selector on every call. */
export function newListWatchFromClient<T extends KubeObject = KubeObject>(
  client: Getter,
  resource: string,
  namespace: string,
  options: { fieldSelector?: string } = {},
): ListerWatcher<T> {
  return newFilteredListWatchFromClient<T>(client, resource, namespace, (o) =>
    options.fieldSelector ? { ...o, fieldSelector: options.fieldSelector } : o,
  );
}
// #endregion list-watch-from-client
