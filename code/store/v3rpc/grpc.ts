/**
 * V3RPCServer — etcd's v3 API over gRPC, so the real `etcdctl` and etcd client libraries can use
 * our store unchanged.
 *
 * Solves:
 * - the in-process server (etcdserver/server.ts) already answers etcd's requests with etcd's responses;
 *   this file puts it on the wire: it decodes each protobuf request (etcdserverpb/rpc.proto, loaded by
 *   etcdserverpb/rpc-pb.ts) into the TypeScript shapes of rpc.ts, calls the matching method, and encodes the answer;
 * - an error must reach the client as etcd sends it — a gRPC status code plus etcd's text, word
 *   for word — because clients decide on the code and print the text
 *   (`Error: etcdserver: mvcc: required revision has been compacted`);
 * - no request, however malformed or large, may crash the server: oversized messages are refused
 *   by gRPC itself or with etcd's "request is too large", and an unexpected exception in a
 *   handler becomes an `Internal` status and a log line, never an exit.
 *
 * Invariants:
 * - a write request (Put, DeleteRange, a writing Txn, Compact, LeaseGrant, LeaseRevoke) larger
 *   than `maxRequestBytes` (default 1.5 MiB, etcd's `--max-request-bytes`) is refused before it
 *   touches the store; gRPC refuses any message larger than that plus 512 KiB of overhead, as
 *   etcd configures it;
 * - every stream (Watch, LeaseKeepAlive) is registered until it ends, so `close()` can end them:
 *   a stream left open would keep the process alive.
 *
 * What etcd does differently: its size check measures the raft entry a write becomes (the
 * request plus a small header); we measure the request as it arrived. etcd also installs
 * interceptors for auth, metrics, logging and request tracing. And Go's HTTP/2 accepts what
 * Node's refuses: etcdctl 3.4's `endpoint status --cluster` dials each advertised URL with the
 * whole URL (`http://127.0.0.1:2379`) as the HTTP/2 `:authority`, which Node's nghttp2 resets as
 * a protocol error; so our listener mends that header on the way in (h2-authority.ts).
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/grpc.go (Server: grpc.MaxRecvMsgSize, RegisterKVServer, ...)
 * @upstream etcd-io/etcd server/embed/config.go (DefaultMaxRequestBytes)
 * @chapter 01-etcd-watch
 */
import { type AddressInfo, createServer, type Server } from "node:net";
import * as grpc from "@grpc/grpc-js";
import type { EtcdServer } from "../etcdserver/server.ts";
import { type EtcdService, etcdserverpb } from "../etcdserverpb/rpc-pb.ts";
import type { Cluster } from "../membership/cluster.ts";
import { type Logger, nopLogger } from "../pkg/log.ts";
import { mendingConnection } from "./h2-authority.ts";
import { kvServer } from "./key.ts";
import { leaseServer } from "./lease.ts";
import { maintenanceServer } from "./maintenance.ts";
import { clusterServer } from "./member.ts";
import { withWireSizes } from "./util.ts";
import { watchResponseEncoder, watchServer } from "./watch.ts";

/** etcd's default `--max-request-bytes`: 1.5 MiB. */
export const defaultMaxRequestBytes = 1.5 * 1024 * 1024;
/** What etcd adds to the request limit for gRPC's own framing (grpcOverheadBytes). */
export const grpcOverheadBytes = 512 * 1024;

export interface V3RPCServerOptions {
  /** Who we are, for MemberList and Status. */
  cluster: Cluster;
  /** etcd's --max-request-bytes. */
  maxRequestBytes?: number;
  logger?: Logger;
  /** How often watchers with progress_notify hear the revision when idle (etcd: 10 minutes). */
  progressNotifyInterval?: number;
  /**
   * Mend the `:authority` etcdctl's `--cluster` sends (h2-authority.ts); default true. It costs
   * CPU: every byte then passes through JavaScript on its way to and from Node's HTTP/2.
   */
  mendAuthority?: boolean;
}

// #region services
/** etcd's services as this server registers them: request sizes remembered (util.ts). */
function loadServices(): Record<EtcdService, grpc.ServiceDefinition> {
  const pb = etcdserverpb();
  const service = (name: EtcdService) => withWireSizes(pb[name].service);
  const watch = service("Watch");
  return {
    KV: service("KV"),
    // Watch responses get their own encoder: it encodes each event once for all its watchers.
    Watch: { ...watch, Watch: { ...watch.Watch, responseSerialize: watchResponseEncoder() } },
    Lease: service("Lease"),
    Cluster: service("Cluster"),
    Maintenance: service("Maintenance"),
  };
}
// #endregion services

export class V3RPCServer {
  private readonly grpcServer: grpc.Server;
  private readonly maxRequestBytes: number;
  private readonly log: Logger;
  /** Ends each open stream; see the invariants. */
  private readonly openStreams = new Set<() => void>();
  /** Our TCP listeners, and the way their connections get to gRPC (see listen). */
  private readonly listeners: Server[] = [];
  private injector?: grpc.ConnectionInjector;

  constructor(
    readonly etcd: EtcdServer,
    private readonly opts: V3RPCServerOptions,
  ) {
    this.maxRequestBytes = opts.maxRequestBytes ?? defaultMaxRequestBytes;
    this.log = opts.logger ?? nopLogger;
    this.grpcServer = new grpc.Server({
      "grpc.max_receive_message_length": this.maxRequestBytes + grpcOverheadBytes,
      "grpc.max_send_message_length": -1,
      // grpc-js keeps channelz statistics (counters and timestamps for every call and message)
      // unless told not to; nothing here reads them, and they cost time on every call.
      "grpc.enable_channelz": 0,
    });
    const services = loadServices();
    this.grpcServer.addService(services.KV, kvServer(etcd, this.maxRequestBytes, this.log));
    this.grpcServer.addService(
      services.Watch,
      watchServer(
        etcd,
        { logger: this.log, progressNotifyInterval: opts.progressNotifyInterval },
        this.openStreams,
      ),
    );
    this.grpcServer.addService(
      services.Lease,
      leaseServer(etcd, this.maxRequestBytes, this.log, this.openStreams),
    );
    this.grpcServer.addService(services.Cluster, clusterServer(etcd, opts.cluster, this.log));
    this.grpcServer.addService(services.Maintenance, maintenanceServer(etcd, opts.cluster, this.log));
  }

  // #region listen
  /**
   * Starts serving on `host:port` (port 0 picks a free one); resolves to the port bound. We accept
   * the connections ourselves and hand each to gRPC through an AuthorityMender (h2-authority.ts),
   * so that etcdctl's `endpoint status --cluster` is not reset by Node's HTTP/2 layer.
   */
  listen(hostPort: string): Promise<number> {
    if (this.opts.mendAuthority === false) {
      return new Promise((resolve, reject) => {
        this.grpcServer.bindAsync(hostPort, grpc.ServerCredentials.createInsecure(), (err, port) =>
          err ? reject(err) : resolve(port),
        );
      });
    }
    const colon = hostPort.lastIndexOf(":");
    const host = hostPort.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
    const port = Number(hostPort.slice(colon + 1));
    this.injector ??= this.grpcServer.createConnectionInjector(grpc.ServerCredentials.createInsecure());
    const injector = this.injector;
    const listener = createServer((socket) => injector.injectConnection(mendingConnection(socket)));
    this.listeners.push(listener);
    return new Promise((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(port, host, () => {
        listener.off("error", reject);
        resolve((listener.address() as AddressInfo).port);
      });
    });
  }
  // #endregion listen

  /** Ends open streams, lets unary calls in flight finish (up to `graceMs`), then stops. */
  async close(graceMs = 1000): Promise<void> {
    // No new connections; those open are gRPC's to shut down.
    for (const listener of this.listeners.splice(0)) listener.close();
    for (const end of [...this.openStreams]) end();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.grpcServer.forceShutdown();
        resolve();
      }, graceMs);
      this.grpcServer.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
