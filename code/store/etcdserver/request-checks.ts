/**
 * Request checks — the requests etcd refuses before touching the store.
 *
 * Solves:
 * - malformed requests must fail with etcd's own errors, before any work: an empty key, a put
 *   that both sets a value and says ignore_value, a txn with too many operations;
 * - a txn must not change one key twice (two puts, or a put inside a range it deletes): which
 *   change would win is not obvious, so etcd refuses the txn as "duplicate key".
 *
 * Invariants:
 * - the checks read only the request, never the store (the store-dependent ones — lease exists,
 *   revision compacted — run in apply.ts under the write);
 * - `success` and `failure` of one txn are exclusive, so the same key may be put in both; but a
 *   key put by a nested txn may not be put or deleted by its parent.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/key.go (checkRangeRequest, checkPutRequest, checkTxnRequest, checkIntervals)
 * @upstream etcd-io/etcd api/v3rpc/rpctypes/error.go (ErrGRPCEmptyKey, ErrGRPCTooManyOps, ErrGRPCDuplicateKey, ...)
 * @chapter 01-etcd-watch
 */

import type {
  DeleteRangeRequest,
  PutRequest,
  RangeRequest,
  RequestOp,
  TxnRequest,
} from "../etcdserverpb/rpc.ts";
import { compareBytes, fromMapKey, mapKey } from "../pkg/bytes.ts";
import { EtcdError } from "../rpctypes/error.ts";
import { ErrKeyNotFound } from "./apply.ts";

export const ErrEmptyKey = new EtcdError("InvalidArgument", "etcdserver: key is not provided");
export const ErrValueProvided = new EtcdError("InvalidArgument", "etcdserver: value is provided");
export const ErrLeaseProvided = new EtcdError("InvalidArgument", "etcdserver: lease is provided");
export const ErrTooManyOps = new EtcdError(
  "InvalidArgument",
  "etcdserver: too many operations in txn request",
);
export const ErrDuplicateKey = new EtcdError(
  "InvalidArgument",
  "etcdserver: duplicate key given in txn request",
);

/** etcd's --max-txn-ops default: at most this many compares, and this many ops per branch. */
export const defaultMaxTxnOps = 128;

// #region simple-checks
export function checkRangeRequest(r: RangeRequest): EtcdError | undefined {
  return r.key.length === 0 ? ErrEmptyKey : undefined;
}

export function checkPutRequest(r: PutRequest): EtcdError | undefined {
  if (r.key.length === 0) return ErrEmptyKey;
  if (r.ignoreValue && r.value && r.value.length !== 0) return ErrValueProvided;
  if (r.ignoreLease && r.lease) return ErrLeaseProvided;
  return undefined;
}

export function checkDeleteRequest(r: DeleteRangeRequest): EtcdError | undefined {
  return r.key.length === 0 ? ErrEmptyKey : undefined;
}
// #endregion simple-checks

// #region check-txn
/**
 * The shape of a txn: not too many compares or ops, every key given, no empty op. A nested txn
 * gets the budget its parent left (maxTxnOps minus the parent's largest list).
 */
export function checkTxnRequest(r: TxnRequest, maxTxnOps = defaultMaxTxnOps): EtcdError | undefined {
  const compare = r.compare ?? [];
  const success = r.success ?? [];
  const failure = r.failure ?? [];
  const opc = Math.max(compare.length, success.length, failure.length);
  if (opc > maxTxnOps) return ErrTooManyOps;
  if (compare.some((c) => c.key.length === 0)) return ErrEmptyKey;
  for (const op of [...success, ...failure]) {
    const err = checkRequestOp(op, maxTxnOps - opc);
    if (err) return err;
  }
  return undefined;
}

function checkRequestOp(op: RequestOp, maxTxnOps: number): EtcdError | undefined {
  if (op.requestRange) return checkRangeRequest(op.requestRange);
  if (op.requestPut) return checkPutRequest(op.requestPut);
  if (op.requestDeleteRange) return checkDeleteRequest(op.requestDeleteRange);
  if (op.requestTxn) return checkTxnRequest(op.requestTxn, maxTxnOps);
  return ErrKeyNotFound; // an empty op: etcd answers "key not found"
}
// #endregion check-txn

// #region check-intervals
/** A deleted key or range: [key, end), or just key when end is undefined. */
interface Interval {
  key: Uint8Array;
  end?: Uint8Array;
}

/**
 * Note: etcd compares a delete's range_end as a plain string here, so a "from key" delete
 * (range_end "\0") is an empty interval and does not collide with puts. We keep that behaviour.
 */
function deleteInterval(d: DeleteRangeRequest): Interval {
  return d.rangeEnd && d.rangeEnd.length > 0 ? { key: d.key, end: d.rangeEnd } : { key: d.key };
}

function hits(dels: Interval[], key: Uint8Array): boolean {
  return dels.some((iv) =>
    iv.end === undefined
      ? compareBytes(iv.key, key) === 0
      : compareBytes(iv.key, key) <= 0 && compareBytes(key, iv.end) < 0,
  );
}

/**
 * Finds a key that one branch of a txn would change twice. Returns the keys put and the ranges
 * deleted (so the parent can check against them), or ErrDuplicateKey.
 */
export function checkIntervals(reqs: RequestOp[]): { puts: Set<string>; dels: Interval[] } | EtcdError {
  const dels: Interval[] = reqs.flatMap((op) =>
    op.requestDeleteRange ? [deleteInterval(op.requestDeleteRange)] : [],
  );
  const puts = new Set<string>();

  for (const op of reqs) {
    if (!op.requestTxn) continue;
    const then = checkIntervals(op.requestTxn.success ?? []);
    if (then instanceof EtcdError) return then;
    const otherwise = checkIntervals(op.requestTxn.failure ?? []);
    if (otherwise instanceof EtcdError) return otherwise;
    for (const k of then.puts) {
      if (puts.has(k) || hits(dels, fromMapKey(k))) return ErrDuplicateKey;
      puts.add(k);
    }
    for (const k of otherwise.puts) {
      // the same key in `then` is fine: only one of the two branches runs
      if (puts.has(k) && !then.puts.has(k)) return ErrDuplicateKey;
      if (hits(dels, fromMapKey(k))) return ErrDuplicateKey;
      puts.add(k);
    }
    dels.push(...then.dels, ...otherwise.dels);
  }

  for (const op of reqs) {
    if (!op.requestPut) continue;
    const k = mapKey(op.requestPut.key);
    if (puts.has(k) || hits(dels, op.requestPut.key)) return ErrDuplicateKey;
    puts.add(k);
  }
  return { puts, dels };
}
// #endregion check-intervals
