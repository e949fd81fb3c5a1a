/**
 * etcd's v3 API messages — the requests and responses of the KV, Lease and Watch services.
 *
 * Solves: the in-process server (etcd-server.ts) and, later, the gRPC server speak the same
 * messages, so a request from real `etcdctl` maps onto these types field for field: each field is
 * the camelCase of its name in rpc.proto (`range_end` → `rangeEnd`, `TTL` stays `TTL`), bytes are
 * `Uint8Array`, int64 are numbers, enums are their names.
 *
 * Invariants:
 * - a field absent here means what the proto3 default means (0, false, empty);
 * - int64 values are numbers and stay below 2^53 (revisions and our lease ids do; see lease.ts);
 *   uint64 ids (cluster, member) are bigints.
 *
 * @upstream etcd-io/etcd api/etcdserverpb/rpc.proto (RangeRequest, PutRequest, TxnRequest, WatchResponse, ...)
 * @chapter 01-etcd-watch
 */
import type { Event, KeyValue } from "../mvccpb/kv.ts";

/**
 * cluster_id, member_id and raft_term are uint64 and member ids use all 64 bits, so they are
 * bigints; etcd fills them in at the gRPC layer (v3rpc header.fill), below it they are 0.
 */
export interface ResponseHeader {
  clusterId: bigint;
  memberId: bigint;
  /** The store's revision when the request was served. */
  revision: number;
  raftTerm: bigint;
}

// #region kv-messages
export type SortOrder = "NONE" | "ASCEND" | "DESCEND";
export type SortTarget = "KEY" | "VERSION" | "CREATE" | "MOD" | "VALUE";

export interface RangeRequest {
  key: Uint8Array;
  rangeEnd?: Uint8Array;
  limit?: number;
  revision?: number;
  sortOrder?: SortOrder;
  sortTarget?: SortTarget;
  serializable?: boolean;
  keysOnly?: boolean;
  countOnly?: boolean;
  minModRevision?: number;
  maxModRevision?: number;
  minCreateRevision?: number;
  maxCreateRevision?: number;
}

export interface RangeResponse {
  header: ResponseHeader;
  kvs: KeyValue[];
  more: boolean;
  count: number;
}

export interface PutRequest {
  key: Uint8Array;
  value?: Uint8Array;
  lease?: number;
  prevKv?: boolean;
  ignoreValue?: boolean;
  ignoreLease?: boolean;
}

export interface PutResponse {
  header: ResponseHeader;
  prevKv?: KeyValue;
}

export interface DeleteRangeRequest {
  key: Uint8Array;
  rangeEnd?: Uint8Array;
  prevKv?: boolean;
}

export interface DeleteRangeResponse {
  header: ResponseHeader;
  deleted: number;
  prevKvs: KeyValue[];
}

export type CompareResult = "EQUAL" | "GREATER" | "LESS" | "NOT_EQUAL";
export type CompareTarget = "VERSION" | "CREATE" | "MOD" | "VALUE" | "LEASE";

/** One condition of a txn; the field named by `target` holds the value to compare with. */
export interface Compare {
  result: CompareResult;
  target: CompareTarget;
  key: Uint8Array;
  rangeEnd?: Uint8Array;
  version?: number;
  createRevision?: number;
  modRevision?: number;
  value?: Uint8Array;
  lease?: number;
}

/** Exactly one field is set (proto `oneof request`); none set is the invalid "empty op". */
export interface RequestOp {
  requestRange?: RangeRequest;
  requestPut?: PutRequest;
  requestDeleteRange?: DeleteRangeRequest;
  requestTxn?: TxnRequest;
}

export interface ResponseOp {
  responseRange?: RangeResponse;
  responsePut?: PutResponse;
  responseDeleteRange?: DeleteRangeResponse;
  responseTxn?: TxnResponse;
}

export interface TxnRequest {
  compare?: Compare[];
  success?: RequestOp[];
  failure?: RequestOp[];
}

export interface TxnResponse {
  header: ResponseHeader;
  succeeded: boolean;
  responses: ResponseOp[];
}

export interface CompactionRequest {
  revision: number;
  physical?: boolean;
}

export interface CompactionResponse {
  header: ResponseHeader;
}
// #endregion kv-messages

// #region lease-messages
export interface LeaseGrantRequest {
  TTL: number;
  /** 0 = let the server choose. */
  ID?: number;
}

export interface LeaseGrantResponse {
  header: ResponseHeader;
  ID: number;
  TTL: number;
  error: string;
}

export interface LeaseRevokeRequest {
  ID: number;
}

export interface LeaseRevokeResponse {
  header: ResponseHeader;
}

export interface LeaseKeepAliveRequest {
  ID: number;
}

export interface LeaseKeepAliveResponse {
  header: ResponseHeader;
  ID: number;
  /** The renewed TTL; 0 when the lease does not exist. */
  TTL: number;
}

export interface LeaseTimeToLiveRequest {
  ID: number;
  keys?: boolean;
}

export interface LeaseTimeToLiveResponse {
  header: ResponseHeader;
  ID: number;
  /** Seconds left; -1 when the lease does not exist. */
  TTL: number;
  grantedTTL: number;
  keys: Uint8Array[];
}

export interface LeaseLeasesResponse {
  header: ResponseHeader;
  leases: { ID: number }[];
}
// #endregion lease-messages

// #region watch-messages
export type WatchFilterType = "NOPUT" | "NODELETE";

export interface WatchCreateRequest {
  key: Uint8Array;
  rangeEnd?: Uint8Array;
  /** 0 = from the next revision; a past revision replays history from there. */
  startRevision?: number;
  progressNotify?: boolean;
  filters?: WatchFilterType[];
  prevKv?: boolean;
  /** 0 = let the stream choose. */
  watchId?: number;
}

export interface WatchResponse {
  header: ResponseHeader;
  watchId: number;
  /** The answer to a create request. */
  created: boolean;
  /** The watcher is gone: cancelled by the client, or compacted away (see compactRevision). */
  canceled: boolean;
  /** Set when the watcher asked for history that compaction removed; the oldest revision left. */
  compactRevision: number;
  cancelReason: string;
  fragment: boolean;
  /** All events of a revision arrive in one response, in revision order. */
  events: Event[];
}
// #endregion watch-messages

/** A header with only a revision, for layers below the server (which fills in the rest). */
export function revisionHeader(revision: number): ResponseHeader {
  return { clusterId: 0n, memberId: 0n, revision, raftTerm: 0n };
}
