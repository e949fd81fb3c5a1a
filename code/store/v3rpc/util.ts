/**
 * v3rpc helpers — turning our answers into gRPC answers: results, etcd's errors, and bugs.
 *
 * Solves:
 * - every handler of the gRPC server does the same three things with what the in-process server
 *   returns: send a response; send an `EtcdError` as the gRPC status etcd uses, with etcd's text
 *   word for word (clients branch on the code and print the text); or, when something threw —
 *   a bug, never a client's fault — answer `Internal` and log it instead of crashing the process;
 * - the in-process server may answer at once or, once writes wait for the disk, with a promise;
 *   handlers accept both.
 *
 * - a write larger than `--max-request-bytes` must be refused with etcd's "request is too large",
 *   so each decoded request remembers how many bytes it had on the wire.
 *
 * Invariants:
 * - each call is answered exactly once;
 * - an EtcdError reaches the client as (`code`, `grpcMessage`), e.g. (OutOfRange,
 *   "etcdserver: mvcc: required revision has been compacted").
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/util.go (togRPCError, toErrorCode)
 * @upstream etcd-io/etcd server/etcdserver/v3_server.go (processInternalRaftRequestOnce: ErrRequestTooLarge)
 * @chapter 01-etcd-watch
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../pkg/log.ts";
import { EtcdError, type GrpcCode } from "../rpctypes/error.ts";

// #region to-grpc-error
const grpcStatus: Record<GrpcCode, grpc.status> = {
  InvalidArgument: grpc.status.INVALID_ARGUMENT,
  OutOfRange: grpc.status.OUT_OF_RANGE,
  NotFound: grpc.status.NOT_FOUND,
  FailedPrecondition: grpc.status.FAILED_PRECONDITION,
  ResourceExhausted: grpc.status.RESOURCE_EXHAUSTED,
  Canceled: grpc.status.CANCELLED,
  Unknown: grpc.status.UNKNOWN,
};

/** etcd's togRPCError: the status code and the exact text an etcd client expects. */
export function togRPCError(err: EtcdError): grpc.ServerErrorResponse {
  const e = new Error(err.grpcMessage) as grpc.ServerErrorResponse;
  e.code = grpcStatus[err.code];
  e.details = err.grpcMessage;
  return e;
}

/** A thrown exception is a bug (a Panic): answer Internal, log it, keep serving. */
export function internalError(method: string, thrown: unknown, log: Logger): grpc.ServerErrorResponse {
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  log("error", "unexpected error serving request", { method, error: message });
  const e = new Error(message) as grpc.ServerErrorResponse;
  e.code = grpc.status.INTERNAL;
  e.details = `${method}: ${message}`;
  return e;
}
// #endregion to-grpc-error

type Answer<Res> = Res | EtcdError | Promise<Res | EtcdError>;

/** A unary handler: the answer or an EtcdError (or a promise of either), put on the wire. */
export function unary<Req, Res>(method: string, handle: (req: Req) => Answer<Res>, log: Logger) {
  const send = (callback: grpc.sendUnaryData<Res>, resp: Res | EtcdError) =>
    resp instanceof EtcdError ? callback(togRPCError(resp)) : callback(null, resp);
  return (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>): void => {
    let answer: Answer<Res>;
    try {
      answer = handle(call.request);
    } catch (thrown) {
      callback(internalError(method, thrown, log));
      return;
    }
    // An answer given at once goes out at once; only a promise is waited for.
    if (!(answer instanceof Promise)) {
      send(callback, answer);
      return;
    }
    answer.then(
      (resp) => send(callback, resp),
      (thrown: unknown) => callback(internalError(method, thrown, log)),
    );
  };
}

export const ErrRequestTooLarge = new EtcdError("InvalidArgument", "etcdserver: request is too large");

// #region request-size
/**
 * The size on the wire of a decoded request, for the request-size limit, kept on the request
 * itself under a symbol (no field of a message can have that name). A WeakMap from request to
 * size would do too, but every entry of a WeakMap is extra work for the garbage collector, and
 * there is one per request.
 */
const wireSize = Symbol("wireSize");

/** The same service, with decoders that remember how many bytes each request had. */
export function withWireSizes(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
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
export function checkRequestSize(req: object, maxRequestBytes: number): EtcdError | undefined {
  return ((req as { [wireSize]?: number })[wireSize] ?? 0) > maxRequestBytes ? ErrRequestTooLarge : undefined;
}
// #endregion request-size
