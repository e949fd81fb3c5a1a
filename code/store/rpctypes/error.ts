/**
 * EtcdError — an error as a value: etcd's own message, word for word, plus the gRPC status it becomes.
 *
 * Solves:
 * - a caller must tell "the revision was compacted" from "the key is missing" without parsing text;
 *   so every outcome is one exported value (`ErrCompacted`), compared with `===` as Go compares
 *   `err == mvcc.ErrCompacted`;
 * - the gRPC layer (a later part of this chapter) must answer with the status code and text real
 *   etcd sends, so each value carries both: `code` (a gRPC status code name) and `grpcMessage`.
 *
 * Invariants:
 * - `message` is the text etcd uses where the error is raised (`mvcc: required revision has been
 *   compacted`); `grpcMessage` is what an etcd client reads (`etcdserver: mvcc: required revision
 *   has been compacted`). They differ only where etcd's gRPC layer translates the error.
 * - an `EtcdError` is an outcome a client may cause; a broken invariant (a bug) is a `Panic`,
 *   thrown, as Go code calls `panic` / `lg.Panic`.
 *
 * @upstream etcd-io/etcd api/v3rpc/rpctypes/error.go (ErrGRPCCompacted, ErrGRPCEmptyKey, ...)
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/util.go (togRPCError)
 * @chapter 01-etcd-watch
 */

/** The gRPC status codes etcd's errors map to (google.golang.org/grpc/codes). */
export type GrpcCode =
  | "InvalidArgument"
  | "OutOfRange"
  | "NotFound"
  | "FailedPrecondition"
  | "ResourceExhausted"
  | "Canceled"
  | "Unknown";

export class EtcdError extends Error {
  override readonly name = "EtcdError";
  constructor(
    /** The gRPC status code etcd answers with. */
    readonly code: GrpcCode,
    message: string,
    /** The status message an etcd client receives; the same as `message` unless etcd rewrites it. */
    readonly grpcMessage: string = message,
  ) {
    super(message);
  }
}

/** True for any error value of this package (the `err != nil` of Go). */
export function isEtcdError(x: unknown): x is EtcdError {
  return x instanceof EtcdError;
}

/** A broken invariant — a bug in the caller or in this package, never an outcome to handle. */
export class Panic extends Error {
  override readonly name = "Panic";
}

/** Go's `panic(...)`: stop at once, with a message that says which invariant broke. */
export function panic(message: string): never {
  throw new Panic(message);
}
