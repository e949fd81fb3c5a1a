/**
 * Storage factory — a storage.Interface per resource from `--etcd-servers`, and the compactor.
 * Without `--etcd-servers` the storage is our own store, in process. Upstream: k8s.io/apiserver
 * pkg/storage/storagebackend/factory/etcd3.go and pkg/storage/etcd3/compact.go.
 *
 * Solves:
 * - one place decides where objects live: given `--etcd-servers`, a gRPC client to those
 *   endpoints; given none, our own store in the same process (durable under `dataDir`, or in
 *   memory), so the course's API server runs with nothing else installed;
 * - each resource gets its own Etcd3Store under its key prefix, optionally behind a Cacher —
 *   at most one per prefix, since the point of the cache is one etcd watch per resource;
 * - etcd keeps every revision until compacted: the API server compacts periodically (every 5
 *   minutes by default), and several API servers on one etcd must not each compact — they
 *   agree through a txn on the key `compact_rev_key`, and only the winner compacts.
 *
 * Invariants:
 * - a compaction removes only history older than one whole interval: each round compacts to the
 *   revision seen in the previous round, so a client has at least one interval to resume;
 * - `close()` stops the compactor, the caches and their watches, then the client (and the
 *   embedded store, which it owns).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/storagebackend/factory/etcd3.go (newETCD3Storage, startCompactorOnce)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/etcd3/compact.go (StartCompactor, compactor, compact, compactRevKey)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/storagebackend/config.go (DefaultCompactInterval)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/registry/storage_factory.go (StorageWithCacher)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { EtcdServer } from "../../store/etcdserver/server.ts";
import type { GroupResource } from "../errors.ts";
import { Cacher } from "./cacher.ts";
import { type EtcdClient, GrpcEtcdClient, InProcessEtcdClient } from "./etcd-client.ts";
import type { Etcd3Store } from "./etcd3-store.ts";
import type { IndexedTriggerFunc } from "./indexed-watchers.ts";
import type { Interface } from "./interfaces.ts";
import { TracedEtcd3Store } from "./traced-store.ts"; // chapter 8: tracing

/** Upstream's DefaultCompactInterval. */
export const defaultCompactionIntervalMs = 5 * 60 * 1000;
/** The key the API servers sharing an etcd agree on compaction through. */
export const compactRevKey = "compact_rev_key";

export interface StorageBackendConfig {
  /** `--etcd-servers`: etcd endpoints (`http://127.0.0.1:2379`). None: the embedded store. */
  etcdServers?: string[];
  /** Embedded store only: keep its data here (WAL + snapshots); none: in memory. */
  dataDir?: string;
  /**
   * Embedded store only: use this store, owned by the caller (not closed here), instead of making
   * one — so the store outlives one API server (the informer fault tests restart the server).
   */
  embeddedStore?: EtcdServer;
  /** `--etcd-compaction-interval`; 0 disables compaction. */
  compactionIntervalMs?: number;
  /** Embedded store only: how often idle watches hear etcd's revision (progress notify). */
  progressNotifyIntervalMs?: number;
  /**
   * Ask etcd for watch progress this often while a bookmark-wanting watch is open (0: never).
   * Our store answers only for a watch that has been sent every event so far; older etcd
   * releases answer at once, even with events still queued, so a bookmark could run ahead of
   * them — leave this at 0 with those and rely on etcd's own progress-notify interval.
   */
  progressRequestIntervalMs?: number;
  /** Watch cache options applied to every cached resource. */
  watchCacheCapacity?: number;
  watcherBufferSize?: number;
  bookmarkFrequencyMs?: number;
}

export interface ResourceStorageOptions {
  /** Serve lists and watches from a watch cache (one per prefix). */
  cache?: boolean;
  /** For error messages (`pods "web" not found`); default: the prefix's last segment, core group. */
  groupResource?: GroupResource;
  /** An empty object of the kind, for BOOKMARK events. */
  newFunc?: () => KubeObject;
  /** An object's key under the prefix (default: `<prefix>/<namespace>/<name>` or `<prefix>/<name>`). */
  keyFunc?: (obj: KubeObject) => string;
  /** The field the watch cache indexes watchers by (upstream's StoreOptions.TriggerFunc; pods: spec.nodeName). */
  triggerFunc?: IndexedTriggerFunc;
}

export interface StorageBackend {
  forResource(prefix: string, opts?: ResourceStorageOptions): Interface;
  /** The etcd client underneath (for health checks and tests). */
  readonly client: EtcdClient;
  /** Runs one compactor round now (tests; the timer does the same). */
  compactOnce(): Promise<void>;
  close(): Promise<void>;
}

// #region new-storage-backend
export async function newStorageBackend(cfg: StorageBackendConfig = {}): Promise<StorageBackend> {
  let client: EtcdClient;
  let server: EtcdServer | undefined;
  if (cfg.etcdServers && cfg.etcdServers.length > 0) {
    client = new GrpcEtcdClient(cfg.etcdServers);
  } else if (cfg.embeddedStore) {
    // Not ours to close: `server` stays undefined.
    client = new InProcessEtcdClient(cfg.embeddedStore, {
      progressNotifyInterval: cfg.progressNotifyIntervalMs ?? 5000,
    });
  } else {
    if (cfg.dataDir) {
      const opened = await EtcdServer.open({ dir: cfg.dataDir });
      if (!(opened instanceof EtcdServer)) throw opened;
      server = opened;
    } else {
      server = new EtcdServer();
    }
    client = new InProcessEtcdClient(server, {
      progressNotifyInterval: cfg.progressNotifyIntervalMs ?? 5000,
    });
  }

  const stores = new Map<string, Etcd3Store>();
  const cachers = new Map<string, Cacher>();
  const compactor = new Compactor(client);
  const interval = cfg.compactionIntervalMs ?? defaultCompactionIntervalMs;
  const timer = interval > 0 ? setInterval(() => void compactor.run().catch(() => {}), interval) : undefined;
  timer?.unref?.();

  const storeFor = (prefix: string, opts: ResourceStorageOptions): Etcd3Store => {
    let store = stores.get(prefix);
    if (!store) {
      store = new TracedEtcd3Store({
        client,
        groupResource: opts.groupResource ?? defaultGroupResource(prefix),
        newFunc: opts.newFunc,
        progressRequestIntervalMs: cfg.progressRequestIntervalMs ?? 0,
      });
      stores.set(prefix, store);
    }
    return store;
  };

  return {
    client,
    forResource(prefix, opts = {}) {
      const clean = prefix.replace(/\/+$/, "");
      const store = storeFor(clean, opts);
      if (!opts.cache) return store;
      let cacher = cachers.get(clean);
      if (!cacher) {
        cacher = new Cacher({
          storage: store,
          resourcePrefix: clean,
          groupResource: opts.groupResource ?? defaultGroupResource(clean),
          keyFunc: opts.keyFunc,
          newFunc: opts.newFunc,
          capacity: cfg.watchCacheCapacity,
          // Pods: spec.nodeName (pod.NodeNameTriggerFunc) — which watchers an event is offered
          // to, and the watchers' buffer sizes (suggestedWatchChannelSize).
          indexedTrigger: opts.triggerFunc,
          watcherBufferSize: cfg.watcherBufferSize,
          bookmarkFrequencyMs: cfg.bookmarkFrequencyMs,
        });
        cachers.set(clean, cacher);
      }
      return cacher;
    },
    compactOnce: () => compactor.run(),
    async close() {
      clearInterval(timer);
      for (const c of cachers.values()) await c.close();
      for (const s of stores.values()) await s.close();
      await client.close();
      await server?.close();
    },
  };
}
// #endregion new-storage-backend

/** `/registry/pods` → pods (core group); the caller should pass the real group. */
function defaultGroupResource(prefix: string): GroupResource {
  return { group: "", resource: prefix.slice(prefix.lastIndexOf("/") + 1) };
}

// #region compactor
/**
 * One API server's share of compaction. Each round: "if compact_rev_key's version is still the
 * one I last saw, bump it (a put) and compact to the revision I saw last round". The API server
 * whose put wins compacts; the others learn the new version and revision and wait a round.
 */
export class Compactor {
  /** The version of compact_rev_key last seen: a logical clock shared by all API servers. */
  private compactTime = 0;
  /** The store revision seen in the previous round: what this round compacts to. */
  private rev = 0;

  constructor(private readonly client: EtcdClient) {}

  async run(): Promise<void> {
    const key = new TextEncoder().encode(compactRevKey);
    const resp = await this.client.txn({
      compare: [{ key, target: "VERSION", result: "EQUAL", version: this.compactTime }],
      success: [{ requestPut: { key, value: new TextEncoder().encode(String(this.rev)) } }],
      failure: [{ requestRange: { key } }],
    });
    const compactTo = this.rev;
    this.rev = resp.header.revision;
    if (!resp.succeeded) {
      // Another API server compacted this round; follow its clock.
      this.compactTime = resp.responses[0]?.responseRange?.kvs[0]?.version ?? 0;
      return;
    }
    this.compactTime++;
    if (compactTo === 0) return; // the first round only records where we are
    await this.client.compact(compactTo);
  }
}
// #endregion compactor
