/**
 * KV over gRPC — Range, Put, DeleteRange, Txn and Compact, as etcd's kvServer serves them.
 *
 * Solves: each KV call of a client must reach the in-process server (etcdserver/server.ts) as the
 * TypeScript request it decodes to, and come back as etcd's response or etcd's error; a write
 * larger than `--max-request-bytes` must be refused before it touches the store.
 *
 * Invariants:
 * - only writes are size-checked (Put, DeleteRange, Compact, a Txn that writes): a read never
 *   becomes a raft entry in etcd, so etcd does not limit it — gRPC's own message limit still
 *   applies;
 * - the request checks (empty key, too many ops, duplicate keys) are the in-process server's, so
 *   an in-process caller is refused exactly as a gRPC one (etcd runs them here, in kvServer, and
 *   routes its own in-process client through kvServer too).
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/key.go (kvServer: Range, Put, DeleteRange, Txn, Compact)
 * @chapter 01-etcd-watch
 */
import type * as grpc from "@grpc/grpc-js";
import { isTxnReadonly } from "../etcdserver/apply.ts";
import type { EtcdServer } from "../etcdserver/server.ts";
import type {
  CompactionRequest,
  DeleteRangeRequest,
  PutRequest,
  RangeRequest,
  TxnRequest,
} from "../etcdserverpb/rpc.ts";
import type { Logger } from "../pkg/log.ts";
import { checkRequestSize, unary } from "./util.ts";

// #region kv-server
export function kvServer(
  etcd: EtcdServer,
  maxRequestBytes: number,
  log: Logger,
): grpc.UntypedServiceImplementation {
  const tooLarge = (req: object) => checkRequestSize(req, maxRequestBytes);
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
