/**
 * Apply — what etcd's requests mean: Range, Put, DeleteRange and Txn on top of store transactions.
 *
 * Solves:
 * - the store (kvstore-txn.ts) only knows "read keys at a revision", "put", "delete"; requests
 *   add options with precise meanings: `prev_kv`, `ignore_value`, `ignore_lease`, sorting,
 *   revision filters, `limit` with `more`;
 * - a Txn is compare-and-swap for many keys: evaluate every compare, then run the `success` or
 *   the `failure` ops — all as one write transaction, so they share one revision and nobody sees
 *   half of it. Nested txns choose their branch from the same state (compares are evaluated
 *   before any op runs, nested ones included).
 *
 * Invariants:
 * - a txn either runs all of its chosen ops or none: everything that could fail (an unknown
 *   lease, ignore_value on a missing key, a compacted or future read revision) is checked before
 *   the first write;
 * - a txn's header revision is the revision its writes got, or the current one if it wrote nothing;
 * - compares on a key that does not exist compare against the zero KeyValue (version 0,
 *   create/mod revision 0, lease 0) — except VALUE compares, which then always fail, since an
 *   empty value and a missing key look the same on the wire.
 *
 * @upstream etcd-io/etcd server/etcdserver/apply.go (applierV3backend: Range, Put, DeleteRange, Txn, applyCompare, compareKV, checkRequests)
 * @chapter 01-etcd-watch
 */

import {
  type Compare,
  type DeleteRangeRequest,
  type DeleteRangeResponse,
  type PutRequest,
  type PutResponse,
  type RangeRequest,
  type RangeResponse,
  type RequestOp,
  type ResponseOp,
  revisionHeader,
  type TxnRequest,
  type TxnResponse,
} from "../etcdserverpb/rpc.ts";
import { ErrLeaseNotFound } from "../lease/lessor.ts";
import { inRange, type KeyRange, keyRange } from "../mvcc/index.ts";
import type { KVStore } from "../mvcc/kvstore.ts";
import { ErrCompacted, ErrFutureRev, type TxnRead, TxnWrite } from "../mvcc/kvstore-txn.ts";
import { type KeyValue, zeroKeyValue } from "../mvccpb/kv.ts";
import { compareBytes } from "../pkg/bytes.ts";
import { EtcdError, panic } from "../rpctypes/error.ts";

/** ignore_value / ignore_lease on a key that does not exist. */
export const ErrKeyNotFound = new EtcdError("InvalidArgument", "etcdserver: key not found");

const empty = new Uint8Array(0);

// #region apply-range
/**
 * A Range request. When the result must be sorted or filtered, every match is read first and the
 * limit applied afterwards; otherwise one extra key is read to learn whether there are `more`.
 */
export function applyRange(txn: TxnRead, r: RangeRequest): RangeResponse | EtcdError {
  const sortOrder = r.sortOrder ?? "NONE";
  const sortTarget = r.sortTarget ?? "KEY";
  const filtered = !!(r.minModRevision || r.maxModRevision || r.minCreateRevision || r.maxCreateRevision);
  let limit = r.limit ?? 0;
  if (sortOrder !== "NONE" || filtered) limit = 0;
  if (limit > 0) limit++; // one more than asked, to know whether to say `more`

  const rr = txn.range(r.key, r.rangeEnd, { limit, rev: r.revision ?? 0, countOnly: r.countOnly });
  if (rr instanceof Error) return rr;

  let kvs = rr.kvs.filter((kv) => keepByRevisionFilters(r, kv));
  // The store returns keys in ascending order already; any other target implies ASCEND.
  const order = sortTarget !== "KEY" && sortOrder === "NONE" ? "ASCEND" : sortOrder;
  if (order !== "NONE") {
    // Descending compares the other way round rather than reversing an ascending sort: keys that
    // tie on the target stay in ascending key order, as in etcd (sort.Sort(sort.Reverse(sorter))
    // on etcd's short results is an insertion sort, which keeps ties in the order they came).
    const by = sortBy(sortTarget);
    kvs = [...kvs].sort(order === "DESCEND" ? (a, b) => by(b, a) : by);
  }
  let more = false;
  if (r.limit && r.limit > 0 && kvs.length > r.limit) {
    kvs = kvs.slice(0, r.limit);
    more = true;
  }
  if (r.keysOnly) kvs = kvs.map((kv) => ({ ...kv, value: empty }));
  // count is what the store counted in the range, before the revision filters.
  return { header: revisionHeader(rr.rev), kvs, more, count: rr.count };
}

function keepByRevisionFilters(r: RangeRequest, kv: KeyValue): boolean {
  if (r.maxModRevision && kv.modRevision > r.maxModRevision) return false;
  if (r.minModRevision && kv.modRevision < r.minModRevision) return false;
  if (r.maxCreateRevision && kv.createRevision > r.maxCreateRevision) return false;
  if (r.minCreateRevision && kv.createRevision < r.minCreateRevision) return false;
  return true;
}

function sortBy(target: NonNullable<RangeRequest["sortTarget"]>): (a: KeyValue, b: KeyValue) => number {
  switch (target) {
    case "KEY":
      return (a, b) => compareBytes(a.key, b.key);
    case "VERSION":
      return (a, b) => a.version - b.version;
    case "CREATE":
      return (a, b) => a.createRevision - b.createRevision;
    case "MOD":
      return (a, b) => a.modRevision - b.modRevision;
    case "VALUE":
      return (a, b) => compareBytes(a.value, b.value);
  }
}
// #endregion apply-range

// #region apply-put
/**
 * A Put request, inside `txn` or (txn undefined) as a write transaction of its own.
 * ignore_value / ignore_lease keep the key's current value / lease, so the key must exist.
 */
export function applyPut(store: KVStore, txn: TxnWrite | undefined, p: PutRequest): PutResponse | EtcdError {
  if (txn) return putInTxn(txn, p);
  const lease = p.lease ?? 0;
  if (lease !== 0 && !store.lessor?.lookup(lease)) return ErrLeaseNotFound;
  const own = store.write();
  const resp = putInTxn(own, p);
  own.end();
  return resp;
}

function putInTxn(txn: TxnWrite, p: PutRequest): PutResponse | EtcdError {
  let value = p.value ?? empty;
  let lease = p.lease ?? 0;
  let prev: KeyValue | undefined;
  if (p.ignoreValue || p.ignoreLease || p.prevKv) {
    const rr = txn.range(p.key, undefined);
    if (rr instanceof Error) return rr;
    prev = rr.kvs[0];
  }
  if ((p.ignoreValue || p.ignoreLease) && !prev) return ErrKeyNotFound;
  if (p.ignoreValue && prev) value = prev.value;
  if (p.ignoreLease && prev) lease = prev.lease;
  const rev = txn.put(p.key, value, lease);
  return { header: revisionHeader(rev), prevKv: p.prevKv ? prev : undefined };
}
// #endregion apply-put

// #region apply-delete-range
export function applyDeleteRange(
  store: KVStore,
  txn: TxnWrite | undefined,
  dr: DeleteRangeRequest,
): DeleteRangeResponse | EtcdError {
  if (txn) return deleteInTxn(txn, dr);
  const own = store.write();
  const resp = deleteInTxn(own, dr);
  own.end();
  return resp;
}

function deleteInTxn(txn: TxnWrite, dr: DeleteRangeRequest): DeleteRangeResponse | EtcdError {
  let prevKvs: KeyValue[] = [];
  if (dr.prevKv) {
    const rr = txn.range(dr.key, dr.rangeEnd);
    if (rr instanceof Error) return rr;
    prevKvs = rr.kvs;
  }
  const { deleted, rev } = txn.deleteRange(dr.key, dr.rangeEnd);
  return { header: revisionHeader(rev), deleted, prevKvs };
}
// #endregion apply-delete-range

// #region compare
/** Whether a compare holds: for a range, it must hold for every key in it. */
export function applyCompare(rv: TxnRead, c: Compare): boolean {
  const rr = rv.range(c.key, c.rangeEnd);
  if (rr instanceof Error) return false;
  if (rr.kvs.length === 0) {
    // A missing key has no value to compare; but it does have version 0, create_revision 0 …,
    // which is how "create only if absent" is written: compare(version(k) = 0).
    if (c.target === "VALUE") return false;
    return compareKV(c, zeroKeyValue);
  }
  return rr.kvs.every((kv) => compareKV(c, kv));
}

export function compareKV(c: Compare, kv: KeyValue): boolean {
  let result: number;
  switch (c.target) {
    case "VALUE":
      result = compareBytes(kv.value, c.value ?? empty);
      break;
    case "CREATE":
      result = Math.sign(kv.createRevision - (c.createRevision ?? 0));
      break;
    case "MOD":
      result = Math.sign(kv.modRevision - (c.modRevision ?? 0));
      break;
    case "VERSION":
      result = Math.sign(kv.version - (c.version ?? 0));
      break;
    case "LEASE":
      result = Math.sign(kv.lease - (c.lease ?? 0));
      break;
  }
  switch (c.result) {
    case "EQUAL":
      return result === 0;
    case "NOT_EQUAL":
      return result !== 0;
    case "GREATER":
      return result > 0;
    case "LESS":
      return result < 0;
  }
}
// #endregion compare

// #region txn
/**
 * The branch every txn takes, decided before any op runs: `succeeded` for this txn, and one
 * entry per nested txn among the chosen ops, in order. (etcd flattens this tree into a []bool.)
 */
export interface TxnPath {
  succeeded: boolean;
  nested: TxnPath[];
}

/** How a txn evaluates one compare: applyCompare, unless a caller (a course exercise) swaps it. */
export type CompareFunc = (rv: TxnRead, c: Compare) => boolean;

export function compareToPath(rv: TxnRead, rt: TxnRequest, compare: CompareFunc = applyCompare): TxnPath {
  const succeeded = (rt.compare ?? []).every((c) => compare(rv, c));
  const nested = chosenOps(rt, succeeded)
    .filter((op) => op.requestTxn)
    .map((op) => compareToPath(rv, op.requestTxn!, compare));
  return { succeeded, nested };
}

function chosenOps(rt: TxnRequest, succeeded: boolean): RequestOp[] {
  return (succeeded ? rt.success : rt.failure) ?? [];
}

/** A txn is read-only when every op of both branches is a Range (a nested txn counts as a write). */
export function isTxnReadonly(rt: TxnRequest): boolean {
  return [...(rt.success ?? []), ...(rt.failure ?? [])].every((op) => op.requestRange !== undefined);
}

// #region apply-txn
export function applyTxn(
  store: KVStore,
  rt: TxnRequest,
  compare: CompareFunc = applyCompare,
): TxnResponse | EtcdError {
  const isWrite = !isTxnReadonly(rt);
  // A write txn decides inside its own write transaction: on the newest state, the one it writes
  // to. (With storage, reads — store.read() — see only what is on disk, which can be older: a
  // compare there could let two compare-and-swaps both win.) A read-only txn reads like a Range.
  const txn = isWrite ? store.write() : store.read();
  const path = compareToPath(txn, rt, compare);
  // Everything that could fail is checked now, so the write below never stops half-way.
  // The checks visit the ops in the order they will run, so a put can see the deletes before it.
  const deletedBefore: KeyRange[] = [];
  const checkPut = (op: RequestOp) => {
    const d = op.requestDeleteRange;
    if (d) deletedBefore.push(keyRange(d.key, d.rangeEnd));
    return checkRequestPut(store, txn, op, deletedBefore);
  };
  const checked =
    (isWrite ? checkRequests(txn, rt, path, checkPut) : undefined) ??
    checkRequests(txn, rt, path, (op) => checkRequestRange(txn, op));
  if (checked) {
    txn.end(); // nothing changed: no revision, nothing to log
    return checked;
  }

  const responses = applyOps(store, txn, rt, path);
  const changed = txn instanceof TxnWrite && txn.changes.length > 0;
  const rev = changed ? txn.rev() + 1 : txn.rev();
  txn.end();
  return { header: revisionHeader(rev), succeeded: path.succeeded, responses };
}
// #endregion apply-txn

function applyOps(store: KVStore, txn: TxnRead, rt: TxnRequest, path: TxnPath): ResponseOp[] {
  const nested = [...path.nested];
  return chosenOps(rt, path.succeeded).map((op): ResponseOp => {
    if (op.requestRange) return { responseRange: mustSucceed(applyRange(txn, op.requestRange)) };
    if (op.requestTxn) {
      const sub = nested.shift()!;
      // etcd leaves a nested txn's header empty; only the outer response gets a revision.
      const responses = applyOps(store, txn, op.requestTxn, sub);
      return { responseTxn: { header: revisionHeader(0), succeeded: sub.succeeded, responses } };
    }
    if (!(txn instanceof TxnWrite)) return panic("write op in a read-only txn");
    if (op.requestPut) return { responsePut: mustSucceed(applyPut(store, txn, op.requestPut)) };
    if (op.requestDeleteRange) {
      return { responseDeleteRange: mustSucceed(applyDeleteRange(store, txn, op.requestDeleteRange)) };
    }
    return {}; // an empty op; the server's request checks refuse these before they get here
  });
}

/** Ops run after all checks passed; an error now would leave a txn half-applied — a bug. */
function mustSucceed<T>(resp: T | EtcdError): T {
  if (resp instanceof EtcdError) return panic(`unexpected error during txn: ${resp.message}`);
  return resp;
}

/** Runs `check` on every op of the chosen branches (nested ones too); the first error wins. */
function checkRequests(
  rv: TxnRead,
  rt: TxnRequest,
  path: TxnPath,
  check: (op: RequestOp) => EtcdError | undefined,
): EtcdError | undefined {
  const nested = [...path.nested];
  for (const op of chosenOps(rt, path.succeeded)) {
    const err = op.requestTxn ? checkRequests(rv, op.requestTxn, nested.shift()!, check) : check(op);
    if (err) return err;
  }
  return undefined;
}

/**
 * A put that keeps the key's value or lease needs the key to exist when it runs — and not only
 * before the txn: an earlier delete of the same txn may remove it. etcd checks only the state
 * before the txn and then panics mid-txn, crashing the member (v3.5 apply.go applyTxn,
 * "unexpected error during txn with writes"); its duplicate-key check lets this through when
 * the delete is a from-key range (see request-checks.ts). We refuse it up front instead.
 */
function checkRequestPut(
  store: KVStore,
  rv: TxnRead,
  op: RequestOp,
  deletedBefore: KeyRange[] = [],
): EtcdError | undefined {
  const p = op.requestPut;
  if (!p) return undefined;
  if (p.ignoreValue || p.ignoreLease) {
    const rr = rv.range(p.key, undefined);
    if (rr instanceof Error) return rr;
    if (rr.kvs.length === 0 || deletedBefore.some((d) => inRange(d, p.key))) return ErrKeyNotFound;
  }
  if (p.lease && !store.lessor?.lookup(p.lease)) return ErrLeaseNotFound;
  return undefined;
}

function checkRequestRange(rv: TxnRead, op: RequestOp): EtcdError | undefined {
  const r = op.requestRange;
  if (!r?.revision) return undefined;
  if (r.revision > rv.rev()) return ErrFutureRev;
  if (r.revision < rv.firstRev) return ErrCompacted;
  return undefined;
}
// #endregion txn
