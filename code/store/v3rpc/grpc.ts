/**
 * V3RPCServer — etcd's v3 API over gRPC, so the real `etcdctl` and etcd client libraries can use
 * our store unchanged.
 *
 * Solves:
 * - the in-process server (etcd-server.ts) already answers etcd's requests with etcd's responses;
 *   this file puts it on the wire: it decodes each protobuf request (etcdserverpb/rpc.proto) into
 *   the TypeScript shapes of rpc.ts, calls the matching method, and encodes the answer;
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
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/grpc.go (Server)
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/lease.go (LeaseServer, leaseKeepAlive)
 * @upstream etcd-io/etcd server/etcdserver/v3_server.go (processInternalRaftRequestOnce: ErrRequestTooLarge)
 * @upstream etcd-io/etcd server/embed/config.go (DefaultMaxRequestBytes)
 * @chapter 01-etcd-watch
 */
import { type AddressInfo, createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { isTxnReadonly } from "../etcdserver/apply.ts";
import type { EtcdServer } from "../etcdserver/server.ts";
import type {
  CompactionRequest,
  DeleteRangeRequest,
  LeaseGrantRequest,
  LeaseKeepAliveRequest,
  LeaseKeepAliveResponse,
  LeaseRevokeRequest,
  LeaseTimeToLiveRequest,
  PutRequest,
  RangeRequest,
  TxnRequest,
} from "../etcdserverpb/rpc.ts";
import type { Cluster } from "../membership/cluster.ts";
import { type Logger, nopLogger } from "../pkg/log.ts";
import { EtcdError } from "../rpctypes/error.ts";
import { mendingConnection } from "./h2-authority.ts";
import { maintenanceService, memberListService } from "./maintenance.ts";
import { internalError, togRPCError, unary } from "./util.ts";
import { serveWatch, watchResponseEncoder } from "./watch.ts";

/** etcd's default `--max-request-bytes`: 1.5 MiB. */
export const defaultMaxRequestBytes = 1.5 * 1024 * 1024;
/** What etcd adds to the request limit for gRPC's own framing (grpcOverheadBytes). */
export const grpcOverheadBytes = 512 * 1024;

export const ErrRequestTooLarge = new EtcdError("InvalidArgument", "etcdserver: request is too large");

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

// #region protos
const protoDir = fileURLToPath(new URL("..", import.meta.url));

/**
 * Decoding options that make a decoded request *be* an rpc.ts request: camelCase field names,
 * enums as their names, int64 as numbers (our revisions and lease ids stay below 2^53; a larger
 * value from a client only loses precision where it is out of range anyway), bytes as Buffers
 * (which are Uint8Arrays). Encoding accepts the same shapes, and bigint for uint64 ids.
 */
const loaderOptions: protoLoader.Options = {
  includeDirs: [protoDir],
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

type EtcdService = "KV" | "Watch" | "Lease" | "Cluster" | "Maintenance";

function loadServices(): Record<EtcdService, grpc.ServiceDefinition> {
  const pkg = protoLoader.loadSync("etcdserverpb/rpc.proto", loaderOptions);
  const service = (name: EtcdService) => withWireSizes(pkg[`etcdserverpb.${name}`] as grpc.ServiceDefinition);
  const watch = service("Watch");
  return {
    KV: service("KV"),
    // Watch responses get their own encoder: it encodes each event once for all its watchers.
    Watch: { ...watch, Watch: { ...watch.Watch, responseSerialize: watchResponseEncoder(protoDir) } },
    Lease: service("Lease"),
    Cluster: service("Cluster"),
    Maintenance: service("Maintenance"),
  };
}
// #endregion protos

// #region request-size
/**
 * The size on the wire of a decoded request, for the request-size limit, kept on the request
 * itself under a symbol (no field of a message can have that name). A WeakMap from request to
 * size would do too, but every entry of a WeakMap is extra work for the garbage collector, and
 * there is one per request.
 */
const wireSize = Symbol("wireSize");

/** The same service, with decoders that remember how many bytes each request had. */
function withWireSizes(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const methods = Object.entries(service).map(([name, method]) => {
    const requestDeserialize = (bytes: Buffer) => {
      const req = method.requestDeserialize(bytes);
      if (req && typeof req === "object") (req as { [wireSize]?: number })[wireSize] = bytes.length;
      return req;
    };
    return [name, { ...method, requestDeserialize }];
  });
  return Object.fromEntries(methods);
}

/** etcd refuses a write whose raft entry would exceed --max-request-bytes. */
function checkRequestSize(req: object, maxRequestBytes: number): EtcdError | undefined {
  return ((req as { [wireSize]?: number })[wireSize] ?? 0) > maxRequestBytes ? ErrRequestTooLarge : undefined;
}
// #endregion request-size

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
    this.grpcServer.addService(services.KV, this.kvServer());
    this.grpcServer.addService(services.Watch, this.watchServer());
    this.grpcServer.addService(services.Lease, this.leaseServer());
    this.grpcServer.addService(services.Cluster, memberListService(etcd, opts.cluster, this.log));
    this.grpcServer.addService(services.Maintenance, maintenanceService(etcd, opts.cluster, this.log));
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

  // #region kv-server
  private kvServer(): grpc.UntypedServiceImplementation {
    const { etcd, log } = this;
    const tooLarge = (req: object) => checkRequestSize(req, this.maxRequestBytes);
    return {
      Range: unary("Range", (r: RangeRequest) => etcd.range(r), log),
      Put: unary("Put", (r: PutRequest) => tooLarge(r) ?? etcd.put(r), log),
      DeleteRange: unary("DeleteRange", (r: DeleteRangeRequest) => tooLarge(r) ?? etcd.deleteRange(r), log),
      // A read-only txn is served like a Range, without becoming a raft entry: no size limit.
      Txn: unary("Txn", (r: TxnRequest) => (isTxnReadonly(r) ? undefined : tooLarge(r)) ?? etcd.txn(r), log),
      Compact: unary("Compact", (r: CompactionRequest) => tooLarge(r) ?? etcd.compact(r), log),
    };
  }
  // #endregion kv-server

  // #region lease-server
  private leaseServer(): grpc.UntypedServiceImplementation {
    const { etcd, log } = this;
    const tooLarge = (req: object) => checkRequestSize(req, this.maxRequestBytes);
    return {
      LeaseGrant: unary("LeaseGrant", (r: LeaseGrantRequest) => tooLarge(r) ?? etcd.leaseGrant(r), log),
      LeaseRevoke: unary("LeaseRevoke", (r: LeaseRevokeRequest) => tooLarge(r) ?? etcd.leaseRevoke(r), log),
      LeaseTimeToLive: unary("LeaseTimeToLive", (r: LeaseTimeToLiveRequest) => etcd.leaseTimeToLive(r), log),
      LeaseLeases: unary("LeaseLeases", () => etcd.leaseLeases(), log),
      LeaseKeepAlive: (call: grpc.ServerDuplexStream<LeaseKeepAliveRequest, LeaseKeepAliveResponse>) =>
        this.leaseKeepAlive(call),
    };
  }

  /**
   * One answer per request, in order: the renewed TTL, or TTL 0 for a lease that does not exist
   * (the facade decides that). The client ending its side ends the stream, as etcd returns
   * when Recv reports EOF.
   */
  private leaseKeepAlive(call: grpc.ServerDuplexStream<LeaseKeepAliveRequest, LeaseKeepAliveResponse>): void {
    const end = () => {
      this.openStreams.delete(end);
      if (!call.writableEnded) call.end();
    };
    this.openStreams.add(end);
    let answered = Promise.resolve();
    call.on("data", (req: LeaseKeepAliveRequest) => {
      // chain the answers, so they leave in the order the requests came even if one waits
      answered = answered.then(async () => {
        if (call.writableEnded || call.cancelled) return;
        try {
          const resp = await this.etcd.leaseKeepAlive(req);
          if (resp instanceof EtcdError) {
            this.openStreams.delete(end);
            call.emit("error", togRPCError(resp));
          } else {
            call.write(resp);
          }
        } catch (thrown) {
          this.openStreams.delete(end);
          call.emit("error", internalError("LeaseKeepAlive", thrown, this.log));
        }
      });
    });
    call.on("end", () => void answered.then(end));
    call.on("cancelled", () => this.openStreams.delete(end));
    call.on("error", () => this.openStreams.delete(end));
  }
  // #endregion lease-server

  private watchServer(): grpc.UntypedServiceImplementation {
    return {
      Watch: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
        const { end } = serveWatch(this.etcd, call, {
          logger: this.log,
          progressNotifyInterval: this.opts.progressNotifyInterval,
          onEnd: () => this.openStreams.delete(end),
        });
        this.openStreams.add(end);
      },
    };
  }
}
