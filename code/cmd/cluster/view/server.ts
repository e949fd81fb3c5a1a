/**
 * startClusterView — the live cluster view: a small HTTP server that runs shared informers on
 * nodes, pods, leases and events, and pushes every change to the browsers that have its page
 * open, as Server-Sent Events.
 * Upstream counterparts: the Kubernetes Dashboard (kubernetes/dashboard — a web UI with its own
 * backend holding the cluster credentials; it lists on every refresh) and `kubectl get --watch`
 * (a watch printed as it streams). Ours is the watching kind of dashboard: chapter 4's informers
 * on the server, rows pushed as the watches deliver.
 *
 * Solves:
 * - a browser cannot hold the cluster's client certificate and should not open four watches per
 *   tab: the server watches once (one informer per resource, as any controller does) and fans
 *   the changes out to every open page;
 * - a page that connects late, or reconnects after the server or the network went away, must end
 *   up showing the cluster as it is: each connection starts with a snapshot of the informers'
 *   caches, then receives changes;
 * - the page must not be woken by changes it cannot show: a Node status write that only moves
 *   heartbeat times yields the same row, and the same row is not sent again.
 *
 * Invariants:
 * - a client's state converges to the caches: the indexer is written before handlers are told
 *   (SharedIndexInformer), so a change missing from a snapshot is delivered after it, and an
 *   upsert or delete is idempotent on the page;
 * - `close()` ends every open stream, stops the informers and resolves once the port is free.
 * - it listens on 127.0.0.1 unless told otherwise: whoever reaches it reads the cluster with the
 *   credentials of `client` (the admin's, from `npm run cluster`).
 *
 * @upstream kubernetes/dashboard modules/api/pkg/resource/pod/list.go (GetPodList: the Dashboard's backend lists instead of watching)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/cmd/get/get.go (GetOptions.watch: `kubectl get --watch`)
 * @upstream kubernetes/client-go informers/factory.go (NewSharedInformerFactory)
 * @chapter 08-cluster
 */
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { KubeObject } from "../../../api/meta.ts";
import { Resources } from "../../../client/informers/factory.ts";
import type { Clientset } from "../../../client/kubernetes/clientset.ts";
import { DeletedFinalStateUnknown } from "../../../client/tools/cache/delta-fifo.ts";
import { SharedInformerFactory } from "../../../client/tools/cache/informer-factory.ts";
import { newFilteredListWatchFromClient } from "../../../client/tools/cache/listwatch.ts";
import {
  type ChangeMessage,
  type EventRow,
  objectKey,
  recentEvents,
  rowFor,
  type SnapshotMessage,
  type ViewResource,
  viewResources,
} from "./cluster-model.ts";
import { WatchTraffic } from "./watch-traffic.ts";

export interface ClusterViewOptions {
  /** Whose eyes the view reads the cluster with (the cluster command passes the admin's). */
  client: Clientset;
  /** 0 (the default): any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

export interface ClusterView {
  url: string;
  close(): Promise<void>;
}

const gvrs = {
  nodes: Resources.nodes,
  pods: Resources.pods,
  leases: Resources.leases,
  events: { group: "", version: "v1", resource: "events" },
} as const;

/** The page's three files, served as they are: no framework, no build step. */
const assets: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/view.js": { file: "view.js", type: "text/javascript; charset=utf-8" },
  "/view.css": { file: "view.css", type: "text/css; charset=utf-8" },
};

/** How often the page is sent the traffic figures (they are per second). */
const trafficIntervalMs = 1000;

export async function startClusterView(opts: ClusterViewOptions): Promise<ClusterView> {
  const { client } = opts;
  const host = opts.host ?? "127.0.0.1";
  const stop = new AbortController();
  const traffic = new WatchTraffic();

  // #region informers
  // newSharedInformerFactory's binding to the clientset, with each ListerWatcher wrapped so that
  // the watch events it yields are counted (the view's "watch traffic").
  const factory = new SharedInformerFactory(
    (gvr, namespace, tweak) =>
      traffic.instrument(
        gvr.resource,
        newFilteredListWatchFromClient(client.restClientFor(gvr), gvr.resource, namespace, (o) => {
          const copy = { ...o };
          tweak?.(copy);
          return copy;
        }),
      ),
    0,
  );
  const informers = Object.fromEntries(viewResources.map((r) => [r, factory.informerFor(gvrs[r])])) as Record<
    ViewResource,
    ReturnType<SharedInformerFactory["informerFor"]>
  >;
  // #endregion informers

  // #region fan-out
  const streams = new Set<ServerResponse>();
  const send = (res: ServerResponse, event: string, data: unknown) => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const broadcast = (event: string, data: unknown) => {
    for (const res of streams) send(res, event, data);
  };

  for (const resource of viewResources) {
    const changed = (msg: ChangeMessage) => broadcast("change", msg);
    informers[resource].addEventHandler({
      onAdd: (obj) => changed({ resource, op: "upsert", row: rowFor(resource, obj) }),
      onUpdate: (oldObj, newObj) => {
        const row = rowFor(resource, newObj);
        // Same row, nothing the page shows has moved (a heartbeat-only status write).
        if (JSON.stringify(rowFor(resource, oldObj)) === JSON.stringify(row)) return;
        changed({ resource, op: "upsert", row });
      },
      onDelete: (obj) => {
        const key = obj instanceof DeletedFinalStateUnknown ? obj.key : objectKey(obj as KubeObject);
        changed({ resource, op: "delete", key });
      },
    });
  }

  const snapshot = (): SnapshotMessage => {
    const now = new Date();
    const rows = (r: ViewResource) =>
      informers[r]
        .getStore()
        .list()
        .map((o) => rowFor(r, o, now));
    return {
      nodes: rows("nodes") as SnapshotMessage["nodes"],
      pods: rows("pods") as SnapshotMessage["pods"],
      leases: rows("leases") as SnapshotMessage["leases"],
      events: recentEvents(rows("events") as EventRow[]),
      synced: Object.fromEntries(viewResources.map((r) => [r, informers[r].hasSynced()])) as Record<
        ViewResource,
        boolean
      >,
    };
  };
  // #endregion fan-out

  const pageDir = new URL("./page/", import.meta.url);
  const files = new Map<string, Buffer>();
  for (const a of Object.values(assets)) files.set(a.file, await readFile(new URL(a.file, pageDir)));

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://view").pathname;
    if (req.method !== "GET") {
      res.writeHead(405, { allow: "GET" }).end();
      return;
    }
    if (path === "/stream") {
      res.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
      });
      // The browser reconnects by itself after this long when the stream breaks.
      res.write("retry: 1000\n\n");
      streams.add(res);
      res.on("close", () => streams.delete(res));
      send(res, "snapshot", snapshot());
      send(res, "traffic", traffic.snapshot());
      return;
    }
    const asset = assets[path];
    if (!asset) {
      res.writeHead(404, { "content-type": "text/plain" }).end("404 page not found\n");
      return;
    }
    res.writeHead(200, { "content-type": asset.type, "cache-control": "no-store" });
    res.end(files.get(asset.file));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });

  factory.start(stop.signal);
  const ticker = setInterval(() => broadcast("traffic", traffic.snapshot()), trafficIntervalMs);
  ticker.unref();

  const { port } = server.address() as AddressInfo;
  const shown = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${port}/`,
    close: () => {
      closing ??= (async () => {
        clearInterval(ticker);
        for (const res of streams) res.end();
        streams.clear();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        stop.abort();
        await Promise.all([closed, factory.shutdown()]);
      })();
      return closing;
    },
  };
}
