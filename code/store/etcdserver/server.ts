/**
 * EtcdServer — the store behind etcd's v3 API, in process: requests in, responses out.
 *
 * Solves:
 * - later layers (the gRPC server, the API server's storage) need one object that takes etcd's
 *   requests (RangeRequest, PutRequest, TxnRequest, LeaseGrantRequest, watch create …) and
 *   answers exactly as etcd does, errors included;
 * - it puts the pieces together the way etcd does: the lessor and the watchable store are wired
 *   so that an expiring lease deletes its keys through a normal write, which watchers see;
 * - it comes in two forms: in memory (`new EtcdServer()`), where every answer is given at once;
 *   and durable (`EtcdServer.open({ dir })`, wal/storage.ts), where an answer that depends on the
 *   store's newest state is a promise that settles once that state is on disk.
 *
 * Invariants:
 * - every request is checked (request-checks.ts) before it reaches the store, so a refused
 *   request changes nothing;
 * - every response header carries the store revision at which the request took effect (or the
 *   current one for reads and lease calls), plus the cluster/member ids and raft term given at
 *   construction;
 * - durable: no answer reveals a commit that is not on disk yet (`afterCommit`); reads need not
 *   wait, because they see only the published revision (mvcc/kvstore.ts).
 *
 * What etcd does differently: writes go through raft (proposed, saved to the WAL, replicated,
 * then applied in order) and reads may wait for a linearizable read index; with one member and
 * one thread we apply at once and log the result. Authentication, quotas and alarms are not
 * modelled.
 *
 * @upstream etcd-io/etcd server/etcdserver/v3_server.go (EtcdServer: Range, Put, DeleteRange, Txn, Compact, LeaseGrant, ...)
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/key.go (kvServer: the request checks before each call)
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/lease.go (LeaseServer: LeaseTimeToLive, leaseKeepAlive)
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/header.go (header.fill)
 * @upstream etcd-io/etcd server/etcdserver/server.go (NewServer, EtcdServer.Stop)
 * @chapter 01-etcd-watch
 */

import type {
  CompactionRequest,
  CompactionResponse,
  DeleteRangeRequest,
  DeleteRangeResponse,
  LeaseGrantRequest,
  LeaseGrantResponse,
  LeaseKeepAliveRequest,
  LeaseKeepAliveResponse,
  LeaseLeasesResponse,
  LeaseRevokeRequest,
  LeaseRevokeResponse,
  LeaseTimeToLiveRequest,
  LeaseTimeToLiveResponse,
  PutRequest,
  PutResponse,
  RangeRequest,
  RangeResponse,
  ResponseHeader,
  TxnRequest,
  TxnResponse,
} from "../etcdserverpb/rpc.ts";
import { ErrLeaseNotFound, Lessor } from "../lease/lessor.ts";
import { WatchableStore, type WatchableStoreOptions } from "../mvcc/watchable-store.ts";
import type { WatchStream, WatchStreamOptions } from "../mvcc/watcher.ts";
import type { Clock } from "../pkg/clock.ts";
import type { EtcdError } from "../rpctypes/error.ts";
import { type OpenStorageError, openStorage, Storage, type StorageOptions } from "../wal/storage.ts";
import { applyDeleteRange, applyPut, applyRange, applyTxn, isTxnReadonly } from "./apply.ts";
import {
  checkDeleteRequest,
  checkIntervals,
  checkPutRequest,
  checkRangeRequest,
  checkTxnRequest,
  defaultMaxTxnOps,
} from "./request-checks.ts";

/**
 * What a request gets: its response or an EtcdError — at once in memory; with storage, a promise
 * that settles when the answer may be given (it rejects only if the WAL failed).
 */
export type Answer<T> = T | EtcdError | Promise<T | EtcdError>;

export interface EtcdServerOptions extends Omit<WatchableStoreOptions, "lessor"> {
  clock?: Clock;
  /** Seconds (etcd's default configuration gives 2). */
  minLeaseTTL?: number;
  /** etcd's --max-txn-ops (default 128). */
  maxTxnOps?: number;
  /** Identity put in every response header (see membership/cluster.ts); 0 when not given. */
  clusterId?: bigint;
  memberId?: bigint;
  raftTerm?: bigint;
}

export class EtcdServer {
  readonly lessor: Lessor;
  readonly kv: WatchableStore;
  private readonly maxTxnOps: number;
  private readonly identity: { clusterId: bigint; memberId: bigint; raftTerm: bigint };
  /** Set by open(): the WAL and snapshots behind the store. */
  private storage?: Storage;

  constructor(opts: EtcdServerOptions = {}) {
    this.lessor = new Lessor({ clock: opts.clock, minLeaseTTL: opts.minLeaseTTL });
    this.kv = new WatchableStore({ ...opts, lessor: this.lessor });
    this.maxTxnOps = opts.maxTxnOps ?? defaultMaxTxnOps;
    this.identity = {
      clusterId: opts.clusterId ?? 0n,
      memberId: opts.memberId ?? 0n,
      raftTerm: opts.raftTerm ?? 0n,
    };
  }

  // #region open
  /**
   * A durable server: recovers the store from `opts.dir` (the newest snapshot, then the WAL after
   * it), then logs every commit there. Damage on disk comes back as an error value.
   */
  static async open(opts: EtcdServerOptions & StorageOptions): Promise<EtcdServer | OpenStorageError> {
    const server = new EtcdServer(opts);
    const storage = await openStorage(server.kv, server.lessor, opts);
    if (!(storage instanceof Storage)) {
      await server.close();
      return storage;
    }
    server.storage = storage;
    return server;
  }
  // #endregion open

  // #region after-commit
  /**
   * The answer to a request that ran on the store's newest state. In memory, it is given at once.
   * With storage, it waits until every commit made so far is on disk and published: the answer
   * may reveal any of them — its own write and revision, but also a compare that failed on a
   * value another client just wrote, or a lease just granted — and nothing a crash could undo may
   * reach a client. (etcd answers when the request is applied, which is after its WAL write.)
   */
  private afterCommit<T>(resp: T | EtcdError): Answer<T> {
    if (!this.storage) return resp;
    return this.storage.sync().then(() => resp);
  }
  // #endregion after-commit

  // #region fill-header
  /** etcd's header.fill: identity always; the revision only if the request did not set one. */
  private fill<T extends { header: ResponseHeader }>(resp: T): T {
    const revision = resp.header.revision === 0 ? this.kv.rev() : resp.header.revision;
    return { ...resp, header: { ...this.identity, revision } };
  }

  private header(revision = this.kv.rev()): ResponseHeader {
    return { ...this.identity, revision };
  }
  // #endregion fill-header

  // #region kv
  range(r: RangeRequest): RangeResponse | EtcdError {
    const err = checkRangeRequest(r);
    if (err) return err;
    const resp = applyRange(this.kv.read(), r);
    return resp instanceof Error ? resp : this.fill(resp);
  }

  put(r: PutRequest): Answer<PutResponse> {
    const err = checkPutRequest(r);
    if (err) return err;
    const resp = applyPut(this.kv, undefined, r);
    return this.afterCommit(resp instanceof Error ? resp : this.fill(resp));
  }

  deleteRange(r: DeleteRangeRequest): Answer<DeleteRangeResponse> {
    const err = checkDeleteRequest(r);
    if (err) return err;
    const resp = applyDeleteRange(this.kv, undefined, r);
    return this.afterCommit(resp instanceof Error ? resp : this.fill(resp));
  }

  txn(r: TxnRequest): Answer<TxnResponse> {
    const err = checkTxnRequest(r, this.maxTxnOps);
    if (err) return err;
    // the overlap check is costlier, so it runs only on a well-formed request
    for (const ops of [r.success ?? [], r.failure ?? []]) {
      // One op without a nested txn cannot overlap another (most writes: one put).
      if (ops.length < 2 && !ops[0]?.requestTxn) continue;
      const overlap = checkIntervals(ops);
      if (overlap instanceof Error) return overlap;
    }
    const resp = applyTxn(this.kv, r);
    const answer = resp instanceof Error ? resp : this.fill(resp);
    // A read-only txn reads the published state, like a Range: nothing to wait for.
    return isTxnReadonly(r) ? answer : this.afterCommit(answer);
  }

  compact(r: CompactionRequest): Answer<CompactionResponse> {
    const result = this.kv.compact(r.revision);
    if (result instanceof Error) return result;
    // etcd answers once the compaction is scheduled; `physical` waits for the deletes, which
    // here have already happened.
    return this.afterCommit({ header: this.header() });
  }
  // #endregion kv

  // #region lease
  leaseGrant(r: LeaseGrantRequest): Answer<LeaseGrantResponse> {
    const lease = this.lessor.grant(r.ID ?? 0, r.TTL);
    if (lease instanceof Error) return this.afterCommit(lease); // "exists" reveals a grant too
    return this.afterCommit({ header: this.header(), ID: lease.id, TTL: lease.ttl, error: "" });
  }

  /** Revokes the lease and deletes its keys (one revision for all of them). */
  leaseRevoke(r: LeaseRevokeRequest): Answer<LeaseRevokeResponse> {
    const err = this.lessor.revoke(r.ID);
    if (err) return this.afterCommit(err);
    return this.afterCommit({ header: this.header() });
  }

  /**
   * One keep-alive. The header is taken before renewing, so a client never sees a revision
   * newer than the renewal. An unknown (or expired) lease answers TTL 0, not an error.
   */
  leaseKeepAlive(r: LeaseKeepAliveRequest): Answer<LeaseKeepAliveResponse> {
    const header = this.header();
    const ttl = this.lessor.renew(r.ID);
    // (A renewal that came too late revokes the lease: its answer waits for that, too.)
    if (ttl === ErrLeaseNotFound) return this.afterCommit({ header, ID: r.ID, TTL: 0 });
    if (typeof ttl !== "number") return this.afterCommit(ttl);
    return this.afterCommit({ header, ID: r.ID, TTL: ttl });
  }

  /** An unknown lease answers TTL -1, not an error (etcd's LeaseServer.LeaseTimeToLive). */
  leaseTimeToLive(r: LeaseTimeToLiveRequest): Answer<LeaseTimeToLiveResponse> {
    const ttl = this.lessor.timeToLive(r.ID, { keys: r.keys });
    if (ttl === ErrLeaseNotFound)
      return this.afterCommit({ header: this.header(), ID: r.ID, TTL: -1, grantedTTL: 0, keys: [] });
    if (ttl instanceof Error) return this.afterCommit(ttl);
    return this.afterCommit({
      header: this.header(),
      ID: r.ID,
      TTL: ttl.ttl,
      grantedTTL: ttl.grantedTTL,
      keys: ttl.keys,
    });
  }

  leaseLeases(): Answer<LeaseLeasesResponse> {
    return this.afterCommit({
      header: this.header(),
      leases: this.lessor.leases().map((l) => ({ ID: l.id })),
    });
  }
  // #endregion lease

  /** A watch stream (one gRPC Watch call): create, cancel and progress requests go to it. */
  watch(opts: WatchStreamOptions = {}): WatchStream {
    return this.kv.newWatchStream({ header: (rev) => this.header(rev), ...opts });
  }

  /**
   * Stops background timers (lease expiry, watch sync); with storage, then waits for every
   * commit to be written and closes the WAL. (etcd takes no snapshot on the way down either.)
   */
  async close(): Promise<void> {
    this.lessor.stop();
    this.kv.close();
    await this.storage?.close();
  }
}
