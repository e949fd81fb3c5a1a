/**
 * Embed — start a whole etcd member from a configuration: the store, its identity, and the gRPC
 * API on the client URLs; and stop it cleanly.
 *
 * Solves:
 * - the `etcd` command, the course's cluster script and tests all need "an etcd listening on
 *   these URLs", without each wiring the store, the member identity and the gRPC server by hand;
 * - tests need a free port: a client URL with port 0 binds any free port, and `clientAddresses`
 *   says which (an advertised URL with port 0 is given the same port, so `member list` stays
 *   truthful);
 * - a member keeps its data in `dataDir` — the WAL and snapshots in `<data-dir>/member/wal` — and
 *   comes back with it after a restart or a crash (storage.ts); `inMemory` (ours, not etcd's)
 *   keeps everything in memory instead, for tests and demos;
 * - shutdown must leave nothing behind: `close()` ends the open watch and keep-alive streams,
 *   waits briefly for requests in flight, stops the gRPC server and the store's timers, and
 *   closes the WAL once every record is written.
 *
 * Invariants:
 * - `startEtcd` either returns a member that serves on every listen URL, or an error value and
 *   nothing left listening (and the WAL closed);
 * - a member holds its data directory's lock (data-dir-lock.ts) from before it reads the WAL
 *   until after it closed it: a second member on the same directory refuses to start;
 * - a member whose WAL fails stops serving — it can make nothing durable any more — and says so
 *   through `failed`, as etcd exits (`lg.Fatal`) when it cannot save to its WAL;
 * - the member and cluster ids depend only on the (default) peer URL and cluster token, as in
 *   etcd, so they are the same on every start.
 *
 * @upstream etcd-io/etcd server/embed/etcd.go (StartEtcd, Etcd.Close)
 * @upstream etcd-io/etcd server/embed/serve.go (serveCtx.serve)
 * @upstream etcd-io/etcd server/embed/config.go (Config.Dir, SnapshotCount)
 * @chapter 01-etcd-watch
 */
import { join } from "node:path";
import { EtcdServer } from "../etcdserver/server.ts";
import { type Cluster, formatID, singleMemberCluster, singleMemberRaftTerm } from "../membership/cluster.ts";
import { type Logger, nopLogger } from "../pkg/log.ts";
import { V3RPCServer } from "../v3rpc/grpc.ts";
import { acquireDataDirLock, DataDirLockError } from "../wal/data-dir-lock.ts";
import { defaultSnapshotCount } from "../wal/storage.ts";

export interface EtcdConfig {
  /** --name: the member's human-readable name. */
  name: string;
  /** --data-dir: where the member keeps its data. */
  dataDir: string;
  /** Ours, not etcd's: keep everything in memory and write nothing to dataDir. */
  inMemory: boolean;
  /** --snapshot-count: WAL records between two snapshots (default: storage.ts). */
  snapshotCount?: number;
  /** --listen-client-urls: where to serve the gRPC API (http only). */
  listenClientURLs: string[];
  /** --advertise-client-urls: what the member tells clients (member list). */
  advertiseClientURLs: string[];
  /** --max-request-bytes. */
  maxRequestBytes?: number;
  /** How often idle progress_notify watchers hear the revision (etcd: 10 minutes). */
  progressNotifyInterval?: number;
  /** Ours: mend etcdctl's `--cluster` `:authority` (v3rpc-server.ts); default true. */
  mendAuthority?: boolean;
  logger?: Logger;
}

export interface Etcd {
  readonly server: EtcdServer;
  readonly cluster: Cluster;
  /** host:port of each listen URL, with the port actually bound. */
  readonly clientAddresses: string[];
  /** Settles if the member had to stop on its own (its WAL failed); the member is then closed. */
  readonly failed: Promise<EmbedError>;
  close(): Promise<void>;
}

/** A start that failed; its message is the whole sentence to print. */
export class EmbedError extends Error {
  override readonly name = "EmbedError";
}

/** Where a member keeps its WAL and snapshots: etcd's `<data-dir>/member/wal`. */
export function walDir(dataDir: string): string {
  return join(dataDir, "member", "wal");
}

/** A client URL as etcd accepts it: http://host:port. */
export function parseClientURL(raw: string): { host: string; port: number } | EmbedError {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return new EmbedError(`invalid client URL "${raw}": expected http://host:port`);
  }
  if (url.protocol !== "http:") {
    return new EmbedError(
      `unsupported client URL "${raw}": this etcd serves plain http:// only (no TLS, no unix sockets)`,
    );
  }
  // URL drops a port equal to the scheme's default (80), so look at the text for one.
  if (url.port === "" && !/:\d+\/?$/.test(raw)) {
    return new EmbedError(`client URL "${raw}" has no port: expected http://host:port`);
  }
  return { host: url.hostname, port: Number(url.port || 80) };
}

// #region start-etcd
export async function startEtcd(cfg: EtcdConfig): Promise<Etcd | EmbedError> {
  const log = cfg.logger ?? nopLogger;

  const listen: { host: string; port: number }[] = [];
  for (const raw of cfg.listenClientURLs) {
    const u = parseClientURL(raw);
    if (u instanceof EmbedError) return u;
    listen.push(u);
  }
  for (const raw of cfg.advertiseClientURLs) {
    const u = parseClientURL(raw);
    if (u instanceof EmbedError) return u;
  }

  // The identity must exist before the first response header is written.
  const cluster = singleMemberCluster(cfg.name, [...cfg.advertiseClientURLs]);
  const self = cluster.members[0];
  log("info", "starting an etcd server", {
    name: cfg.name,
    "data-dir": cfg.inMemory ? "(in memory)" : cfg.dataDir,
    "snapshot-count": cfg.inMemory ? undefined : (cfg.snapshotCount ?? defaultSnapshotCount),
    "local-member-id": formatID(self.id),
    "cluster-id": formatID(cluster.id),
    "listen-client-urls": cfg.listenClientURLs,
    "advertise-client-urls": cfg.advertiseClientURLs,
  });

  let fail: (err: EmbedError) => void = () => {};
  const failed = new Promise<EmbedError>((resolve) => {
    fail = resolve;
  });
  const identity = { clusterId: cluster.id, memberId: self.id, raftTerm: singleMemberRaftTerm };
  // One member per data directory (data-dir-lock.ts), taken before anything in it is read.
  const lock = cfg.inMemory ? undefined : await acquireDataDirLock(cfg.dataDir);
  if (lock instanceof DataDirLockError) return new EmbedError(lock.message);
  const server = cfg.inMemory
    ? new EtcdServer(identity)
    : await openServer(cfg, identity, log, (err) =>
        fail(new EmbedError(`the write-ahead log failed, so this member stopped: ${err.message}`)),
      );
  if (server instanceof EmbedError) {
    await lock?.release();
    return server;
  }
  const v3rpc = new V3RPCServer(server, {
    cluster,
    maxRequestBytes: cfg.maxRequestBytes,
    logger: log,
    progressNotifyInterval: cfg.progressNotifyInterval,
    mendAuthority: cfg.mendAuthority,
  });

  const clientAddresses: string[] = [];
  for (const [i, u] of listen.entries()) {
    try {
      const port = await v3rpc.listen(`${u.host}:${u.port}`);
      clientAddresses.push(`${u.host}:${port}`);
    } catch (err) {
      await v3rpc.close(0);
      await server.close();
      await lock?.release();
      return new EmbedError(`failed to listen on ${cfg.listenClientURLs[i]}: ${(err as Error).message}`);
    }
  }
  // A URL advertised with port 0 gets the port the first listener actually bound.
  self.clientURLs = cfg.advertiseClientURLs.map((raw) => {
    const u = parseClientURL(raw);
    if (u instanceof EmbedError || u.port !== 0) return raw;
    const bound = clientAddresses[0]?.split(":").pop() ?? "0";
    return raw.replace(/:0(\/?)$/, `:${bound}$1`);
  });

  log("info", "ready to serve client requests");
  for (const address of clientAddresses) {
    log("info", "serving client traffic insecurely; this is strongly discouraged!", { address });
  }

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      log("info", "closing etcd server", { name: cfg.name, "advertise-client-urls": self.clientURLs });
      // Requests in flight finish first (their answers wait for the disk), then the WAL is closed.
      await v3rpc.close();
      await server.close();
      await lock?.release(); // last: the WAL is closed, nothing writes to the directory any more
      log("info", "closed etcd server", { name: cfg.name });
    })();
    return closing;
  };
  // A member whose WAL failed can make nothing durable any more: it stops serving at once.
  void failed.then(() => close());
  return { server, cluster, clientAddresses, failed, close };
}
// #endregion start-etcd

/** Recovers the store from the data directory; an error value says what is wrong and where. */
async function openServer(
  cfg: EtcdConfig,
  identity: { clusterId: bigint; memberId: bigint; raftTerm: bigint },
  log: Logger,
  onFatal: (err: Error) => void,
): Promise<EtcdServer | EmbedError> {
  const dir = walDir(cfg.dataDir);
  try {
    const server = await EtcdServer.open({
      ...identity,
      dir,
      snapshotCount: cfg.snapshotCount,
      logger: log,
      onFatal,
    });
    if (server instanceof EtcdServer) return server;
    return new EmbedError(`cannot start from the data directory ${cfg.dataDir}: ${server.message}`);
  } catch (err) {
    // The file system itself refused (permissions, a file where a directory should be, …).
    return new EmbedError(`cannot open the data directory ${cfg.dataDir}: ${(err as Error).message}`);
  }
}
