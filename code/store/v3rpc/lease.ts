/**
 * Lease over gRPC — grant, revoke, time-to-live, list, and the keep-alive stream.
 *
 * Solves:
 * - the unary lease calls reach the in-process server (etcdserver/server.ts) like the KV calls,
 *   grant and revoke size-checked as writes;
 * - `LeaseKeepAlive` is one long stream per client: each request renews a lease, and its answer
 *   (the TTL, or TTL 0 for a lease that does not exist) must leave in the order the requests came,
 *   even when one of them waits for the disk.
 *
 * Invariants:
 * - a keep-alive stream is registered in `streams` from its first byte until it ends, so the
 *   server's `close()` can end it (a stream left open would keep the process alive);
 * - the client ending its side ends the stream, as etcd returns when Recv reports EOF.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/lease.go (LeaseServer, LeaseKeepAlive, leaseKeepAlive)
 * @chapter 01-etcd-watch
 */
import type * as grpc from "@grpc/grpc-js";
import type { EtcdServer } from "../etcdserver/server.ts";
import type {
  LeaseGrantRequest,
  LeaseKeepAliveRequest,
  LeaseKeepAliveResponse,
  LeaseRevokeRequest,
  LeaseTimeToLiveRequest,
} from "../etcdserverpb/rpc.ts";
import type { Logger } from "../pkg/log.ts";
import { EtcdError } from "../rpctypes/error.ts";
import { checkRequestSize, internalError, togRPCError, unary } from "./util.ts";

// #region lease-server
export function leaseServer(
  etcd: EtcdServer,
  maxRequestBytes: number,
  log: Logger,
  /** The server's open streams: each entry ends one (see the invariants). */
  streams: Set<() => void>,
): grpc.UntypedServiceImplementation {
  const tooLarge = (req: object) => checkRequestSize(req, maxRequestBytes);
  return {
    LeaseGrant: unary("LeaseGrant", (r: LeaseGrantRequest) => tooLarge(r) ?? etcd.leaseGrant(r), log),
    LeaseRevoke: unary("LeaseRevoke", (r: LeaseRevokeRequest) => tooLarge(r) ?? etcd.leaseRevoke(r), log),
    LeaseTimeToLive: unary("LeaseTimeToLive", (r: LeaseTimeToLiveRequest) => etcd.leaseTimeToLive(r), log),
    LeaseLeases: unary("LeaseLeases", () => etcd.leaseLeases(), log),
    LeaseKeepAlive: (call: grpc.ServerDuplexStream<LeaseKeepAliveRequest, LeaseKeepAliveResponse>) =>
      leaseKeepAlive(etcd, call, log, streams),
  };
}

/**
 * One answer per request, in order: the renewed TTL, or TTL 0 for a lease that does not exist
 * (the in-process server decides that).
 */
function leaseKeepAlive(
  etcd: EtcdServer,
  call: grpc.ServerDuplexStream<LeaseKeepAliveRequest, LeaseKeepAliveResponse>,
  log: Logger,
  streams: Set<() => void>,
): void {
  const end = () => {
    streams.delete(end);
    if (!call.writableEnded) call.end();
  };
  streams.add(end);
  let answered = Promise.resolve();
  call.on("data", (req: LeaseKeepAliveRequest) => {
    // chain the answers, so they leave in the order the requests came even if one waits
    answered = answered.then(async () => {
      if (call.writableEnded || call.cancelled) return;
      try {
        const resp = await etcd.leaseKeepAlive(req);
        if (resp instanceof EtcdError) {
          streams.delete(end);
          call.emit("error", togRPCError(resp));
        } else {
          call.write(resp);
        }
      } catch (thrown) {
        streams.delete(end);
        call.emit("error", internalError("LeaseKeepAlive", thrown, log));
      }
    });
  });
  call.on("end", () => void answered.then(end));
  call.on("cancelled", () => streams.delete(end));
  call.on("error", () => streams.delete(end));
}
// #endregion lease-server
