/**
 * EtcdClient — the few etcd v3 calls the API server's storage makes, in process or over gRPC.
 * Upstream kube-apiserver makes the same calls through etcd's clientv3 (etcd-io/etcd
 * client/v3/kv.go and watch.go).
 *
 * Solves:
 * - the storage layer (etcd3-store.ts) is written once, against etcd's own request and response
 *   shapes (Range, Txn, Compact, Watch — the messages of rpc.proto, typed in
 *   store/etcdserverpb/rpc.ts), and runs unchanged on the embedded store (`npm run cluster`
 *   needs no etcd binary) and on a real etcd (`--etcd-servers=http://127.0.0.1:2379`), as
 *   kube-apiserver runs on clientv3;
 * - etcd's refusals arrive the same way from both: a rejected promise holding an EtcdError whose
 *   `grpcMessage` is the text etcd sends (`etcdserver: mvcc: required revision has been
 *   compacted`), so `isCompactedError` works whichever transport answered (when no endpoint
 *   answers at all, the rejection is gRPC's own UNAVAILABLE error);
 * - several etcd endpoints: a call that cannot reach one (gRPC UNAVAILABLE) is retried on the
 *   next, as clientv3's balancer fails over.
 *
 * Invariants:
 * - a watch delivers etcd's WatchResponses in order: first `created`, then events and progress
 *   notifications, and at most one `canceled` (then nothing more);
 * - `close()` ends every call and stream this client opened.
 *
 * What clientv3 does differently: it multiplexes every watch of a client over one gRPC stream,
 * keeps per-endpoint health, and retries reads on more errors; we open one stream per watch and
 * fail over on UNAVAILABLE only.
 *
 * @upstream etcd-io/etcd client/v3/kv.go (KV: Get, Txn, Compact)
 * @upstream etcd-io/etcd client/v3/watch.go (Watcher, WatchResponse.IsProgressNotify, RequestProgress)
 * @upstream etcd-io/etcd client/v3/retry_interceptor.go (failover on Unavailable)
 * @chapter 02-apiserver
 */
import * as grpc from "@grpc/grpc-js";
import type { EtcdServer } from "../../store/etcdserver/server.ts";
import type {
  RangeRequest,
  RangeResponse,
  TxnRequest,
  TxnResponse,
  WatchCreateRequest,
  WatchResponse,
} from "../../store/etcdserverpb/rpc.ts";
import { etcdserverpb } from "../../store/etcdserverpb/rpc-pb.ts";
import { ErrCompacted, ErrFutureRev } from "../../store/mvcc/kvstore-txn.ts";
import type { WatchStream } from "../../store/mvcc/watcher.ts";
import { EtcdError, type GrpcCode } from "../../store/rpctypes/error.ts";

// #region etcd-client
/** One watch: its responses in order, a way to ask for a progress notification, and an end. */
export interface EtcdWatch {
  /** The next response; undefined once the watch has ended. Rejects if the transport failed. */
  next(): Promise<WatchResponse | undefined>;
  /** Asks etcd for a progress notification (the revision every event so far has been sent up to). */
  requestProgress(): void;
  close(): void;
}

export interface EtcdClient {
  range(r: RangeRequest): Promise<RangeResponse>;
  txn(r: TxnRequest): Promise<TxnResponse>;
  compact(revision: number): Promise<void>;
  watch(r: WatchCreateRequest): EtcdWatch;
  close(): Promise<void>;
}
// #endregion etcd-client

/** The read or the watch asked for a revision that compaction removed. */
export function isCompactedError(e: unknown): boolean {
  return e instanceof EtcdError && e.grpcMessage === ErrCompacted.grpcMessage;
}

/** The read asked for a revision the store has not reached. */
export function isFutureRevError(e: unknown): boolean {
  return e instanceof EtcdError && e.grpcMessage === ErrFutureRev.grpcMessage;
}

/** clientv3's WatchResponse.IsProgressNotify: no events, not a create/cancel, a revision. */
export function isProgressNotify(r: WatchResponse): boolean {
  return (
    r.events.length === 0 && !r.created && !r.canceled && r.compactRevision === 0 && r.header.revision !== 0
  );
}

// #region in-process-client
/** An EtcdClient over an EtcdServer in the same process (no gRPC, same answers). */
export class InProcessEtcdClient implements EtcdClient {
  private readonly streams = new Set<WatchStream>();

  constructor(
    readonly server: EtcdServer,
    private readonly opts: { progressNotifyInterval?: number } = {},
  ) {}

  async range(r: RangeRequest): Promise<RangeResponse> {
    return settle(this.server.range(r));
  }

  async txn(r: TxnRequest): Promise<TxnResponse> {
    return settle(await this.server.txn(r));
  }

  async compact(revision: number): Promise<void> {
    settle(await this.server.compact({ revision }));
  }

  watch(r: WatchCreateRequest): EtcdWatch {
    const stream = this.server.watch({ progressNotifyInterval: this.opts.progressNotifyInterval });
    this.streams.add(stream);
    // A refused create still queues its `created`+`canceled` response, which the reader sees.
    const id = stream.watch(r);
    return {
      next: () => stream.next(),
      requestProgress: () => {
        if (typeof id === "number") stream.requestProgress(id);
      },
      close: () => {
        stream.close();
        this.streams.delete(stream);
      },
    };
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.close();
    this.streams.clear();
  }
}

function settle<T>(answer: T | EtcdError): T {
  if (answer instanceof EtcdError) throw answer;
  return answer;
}
// #endregion in-process-client

// Over gRPC: any etcd v3 endpoint (a real etcd, or our store/embed/etcd.ts server), described by
// the same rpc.proto, loaded by the same module (store/etcdserverpb/rpc-pb.ts), as our own gRPC
// server: decoded messages have store/etcdserverpb/rpc.ts's shapes.

// biome-ignore lint/suspicious/noExplicitAny: generated gRPC clients are untyped
type GrpcClient = any;

const GRPC_CODE_NAMES: Record<number, GrpcCode> = {
  1: "Canceled",
  3: "InvalidArgument",
  5: "NotFound",
  9: "FailedPrecondition",
  8: "ResourceExhausted",
  11: "OutOfRange",
};

/** A gRPC failure as an EtcdError: the status code's name and etcd's text (`details`). */
function fromGrpcError(err: grpc.ServiceError): EtcdError {
  const code = GRPC_CODE_NAMES[err.code] ?? "Unknown";
  return new EtcdError(code, err.details || err.message, err.details || err.message);
}

/** `http://127.0.0.1:2379` → `127.0.0.1:2379` (gRPC targets have no scheme). */
export function endpointAddress(url: string): string {
  return url.replace(/^https?:\/\//, "").replace(/\/+$/, "");
}

// #region grpc-client
/**
 * An EtcdClient over gRPC. Unary calls that find their endpoint UNAVAILABLE move on to the next
 * endpoint and try again, once per endpoint; a watch starts on the endpoint that answered last.
 */
export class GrpcEtcdClient implements EtcdClient {
  private readonly kv: GrpcClient[];
  private readonly watchers: GrpcClient[];
  /** The endpoint tried first; moves on when one is unreachable. */
  private current = 0;
  private readonly calls = new Set<grpc.ClientDuplexStream<unknown, unknown>>();

  constructor(
    readonly endpoints: string[],
    private readonly requestTimeoutMs = 10_000,
  ) {
    if (endpoints.length === 0) throw new Error("GrpcEtcdClient: no endpoints");
    const { KV, Watch } = etcdserverpb();
    const creds = grpc.credentials.createInsecure();
    const options = { "grpc.max_receive_message_length": -1 };
    this.kv = endpoints.map((e) => new KV(endpointAddress(e), creds, options));
    this.watchers = endpoints.map((e) => new Watch(endpointAddress(e), creds, options));
  }

  private unary<Req, Resp>(method: string, req: Req): Promise<Resp> {
    const attempt = (tries: number): Promise<Resp> =>
      new Promise<Resp>((resolve, reject) => {
        const index = this.current;
        const deadline = Date.now() + this.requestTimeoutMs;
        this.kv[index][method](req, { deadline }, (err: grpc.ServiceError | null, resp: Resp) => {
          if (!err) return resolve(resp);
          if (err.code === grpc.status.UNAVAILABLE && tries + 1 < this.kv.length) {
            // Fail over: the next caller starts from the next endpoint too.
            if (this.current === index) this.current = (index + 1) % this.kv.length;
            return resolve(attempt(tries + 1));
          }
          // No endpoint left to try: gRPC's UNAVAILABLE error as is (its text says why); what
          // etcd answered becomes an EtcdError.
          reject(err.code === grpc.status.UNAVAILABLE ? err : fromGrpcError(err));
        });
      });
    return attempt(0);
  }

  range(r: RangeRequest): Promise<RangeResponse> {
    return this.unary("Range", r);
  }

  txn(r: TxnRequest): Promise<TxnResponse> {
    return this.unary("Txn", r);
  }

  async compact(revision: number): Promise<void> {
    await this.unary("Compact", { revision });
  }

  /**
   * One Watch stream for this watch. If the endpoint turns out unreachable before it answered
   * anything, the same create request goes to the next endpoint; once responses have flowed, a
   * failure ends the watch (the caller resumes from the last revision it saw, as it must anyway).
   */
  watch(r: WatchCreateRequest): EtcdWatch {
    const queue: WatchResponse[] = [];
    let ended = false;
    let failure: Error | undefined;
    let closed = false;
    let call: grpc.ClientDuplexStream<unknown, unknown>;
    let waiter: { resolve: (r: WatchResponse | undefined) => void; reject: (e: Error) => void } | undefined;
    const wake = () => {
      if (!waiter) return;
      const w = waiter;
      const next = queue.shift();
      if (next) {
        waiter = undefined;
        w.resolve(next);
      } else if (failure) {
        waiter = undefined;
        w.reject(failure);
      } else if (ended) {
        waiter = undefined;
        w.resolve(undefined);
      }
    };
    const open = (index: number, tries: number) => {
      let answered = false;
      const c: grpc.ClientDuplexStream<unknown, unknown> = this.watchers[index].Watch();
      call = c;
      this.calls.add(c);
      c.on("data", (resp: WatchResponse) => {
        if (c !== call) return;
        answered = true;
        queue.push(normalizeWatchResponse(resp));
        wake();
      });
      c.on("error", (err: grpc.ServiceError) => {
        this.calls.delete(c);
        if (c !== call) return;
        if (closed || err.code === grpc.status.CANCELLED) {
          ended = true; // cancelling our own call is how close() works: an end, not a failure
        } else if (err.code === grpc.status.UNAVAILABLE && !answered && tries + 1 < this.watchers.length) {
          const next = (index + 1) % this.watchers.length;
          if (this.current === index) this.current = next;
          open(next, tries + 1);
          return;
        } else {
          failure = fromGrpcError(err);
          ended = true;
        }
        wake();
      });
      // A stream the server ends cleanly reports status OK; failures come as "error" (above).
      c.on("status", (st: grpc.StatusObject) => {
        if (st.code !== grpc.status.OK) return;
        this.calls.delete(c);
        ended = true;
        wake();
      });
      c.write({ createRequest: r });
    };
    open(this.current, 0);
    return {
      next: () => {
        const next = queue.shift();
        if (next) return Promise.resolve(next);
        if (failure) return Promise.reject(failure);
        if (ended) return Promise.resolve(undefined);
        return new Promise((resolve, reject) => {
          waiter = { resolve, reject };
        });
      },
      requestProgress: () => {
        if (!ended) call.write({ progressRequest: {} });
      },
      close: () => {
        if (closed) return;
        closed = true;
        this.calls.delete(call);
        call.cancel();
        ended = true;
        wake();
      },
    };
  }

  async close(): Promise<void> {
    for (const call of this.calls) call.cancel();
    this.calls.clear();
    for (const c of [...this.kv, ...this.watchers]) c.close();
  }
}

/** Decoded protobuf leaves absent messages as null; rpc.ts says undefined. */
function normalizeWatchResponse(resp: WatchResponse): WatchResponse {
  return {
    ...resp,
    events: (resp.events ?? []).map((ev) => (ev.prevKv ? ev : { type: ev.type, kv: ev.kv })),
  };
}
// #endregion grpc-client
